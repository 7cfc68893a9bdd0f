#!/usr/bin/env bash
# Follower loss: kill -9 a follower of 3 masters mid-run; see test_failover.sh.
VICTIM=follower exec bash "$(dirname "$0")/test_failover.sh"
