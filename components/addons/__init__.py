"""The add-ons a stack installs on its cluster, as plain data: Helm releases, remote installs, objects.

Pure: `plan(stack)` decides what to install and with which values; components/kubernetes/addons.py
creates them, and `render` writes them.
"""
