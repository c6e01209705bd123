#!/usr/bin/env bash
# Session 48, call C (any card; the H200 would not start): h200_s48b.sh's checks and one-token timings, into c/.
S48_ANY_CARD=1 exec bash scripts/h200_s48b.sh
