"""Where the bytes live: local folders and SSH hosts, behind one Source interface."""

import warnings

# cryptography 51 deprecates DSA, and asyncssh (2.24) names DSA types at import time: ten
# lines of warnings on stderr for every command that opens a connection, about key types we
# never offer. Silenced here because every module that imports asyncssh lives in this package.
warnings.filterwarnings("ignore", message="DSA is deprecated", module=r"asyncssh(\.|$)")
