#!/bin/bash
# The shared library exports the public p11glue_* API and nothing else.
set -u
lib=$1
echo "1..2"
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | sed 's/@.*//')
bad=$(printf '%s\n' "$syms" | grep -v '^p11glue_' | grep -v '^$' || true)
if [ -z "$bad" ]; then
	echo "ok 1 - only p11glue_* symbols are exported"
else
	echo "not ok 1 - unexpected exports:"; printf '#   %s\n' $bad
fi
if printf '%s\n' "$syms" | grep -qx 'p11glue_uri_parse'; then
	echo "ok 2 - the public API is exported"
else
	echo "not ok 2 - p11glue_uri_parse is not exported"
fi
