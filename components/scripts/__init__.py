"""Shell scripts the platform ships into pods (the fabric check and its verdict)."""
