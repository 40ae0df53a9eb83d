"""gpu-training: `pulumi up -s dev|prod` builds the stack its Pulumi.<stack>.yaml declares."""

import stacks
from components import collector

collector.tune()
stacks.run(stacks.load())
