#!/bin/bash
# go tool trace of Go 1.19 against rtdiag on traces of test programs built with it.
GOV=1.19 . "$(dirname "$0")/programs.sh"
