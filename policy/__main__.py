"""The gpu-training policy pack: `pulumi preview --policy-pack policy/`."""

from gpu_policies import POLICIES
from pulumi_policy import PolicyPack

PolicyPack(name="gpu-training", policies=POLICIES)
