#!/bin/sh
# The lint step of action.yml: onair lint -format sarif over
# $ONAIR_LINT_PATHS into $ONAIR_LINT_SARIF, its findings also printed as
# GitHub annotations; the exit status goes to $GITHUB_OUTPUT (exit-code) so
# that the upload runs before the job fails. Outside Actions (no
# $GITHUB_OUTPUT) it exits with lint's status.
set -u
paths=${ONAIR_LINT_PATHS:-shows}
sarif=${ONAIR_LINT_SARIF:-onair-lint.sarif}
backend=${ONAIR_LINT_BACKEND:-cpu}
onair=${ONAIR:-onair}
set --
if [ "${ONAIR_LINT_STRICT:-false}" = true ]; then
	set -- -strict
fi
"$onair" version
# shellcheck disable=SC2086 # paths are split on spaces on purpose
"$onair" lint -backend "$backend" -format sarif "$@" $paths >"$sarif"
rc=$?
# shellcheck disable=SC2086
"$onair" lint -backend "$backend" -format github "$@" $paths || true
echo "onair lint exited $rc; findings in $sarif"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	echo "exit-code=$rc" >>"$GITHUB_OUTPUT"
	exit 0
fi
exit "$rc"
