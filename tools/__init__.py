"""Tools of the repository's own checks (lint), not part of the product."""
