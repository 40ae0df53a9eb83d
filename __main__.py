"""gpu-training: `pulumi up -s dev|prod` builds the stack its Pulumi.<stack>.yaml declares."""

import stacks

stacks.run(stacks.load())
