#!/usr/bin/env bash
# Real Go 1.22 trace (new format): see real_go12x.sh.
GOV=1.22
. "$(dirname "$0")/real_go12x.sh"
