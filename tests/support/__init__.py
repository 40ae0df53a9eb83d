"""Test support: schema validation of emitted objects, Pulumi mocks that record registrations, factories."""
