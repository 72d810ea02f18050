#!/bin/bash
# Builds the .deb packages with dpkg-buildpackage from a copy of the
# tree, installs them with apt-get, checks the installed files
# (check-install.sh /), runs the main job against them (main-job.sh
# --installed), and removes them again, whatever happened. As root (CI),
# or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(libp11glue0 libp11glue-dev p11glue p11glue-modules)
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
work=$(mktemp -d "${TMPDIR:-/tmp}/p11glue-deb.XXXXXX")

installed() { dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null | sed -n 's/ install ok installed$//p' || true; }
remove() {
	local present
	present=$(installed)
	[ -z "$present" ] || DEBIAN_FRONTEND=noninteractive $sudo apt-get remove --purge -y -qq $present >/dev/null
}
cleanup() {
	remove || echo "package check: could not remove ${packages[*]}" >&2
	rm -rf "$work"
}
trap cleanup EXIT

# Packages left from an interrupted run would hide what these install.
remove

# A copy of the tree without build directories: what a source package holds.
mkdir "$work/p11glue"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$work/p11glue"
else
	tar --exclude='./build' --exclude='./build-*' -cf - . | tar -xf - -C "$work/p11glue"
fi

echo "package check: dpkg-buildpackage -us -uc -b (log: $work/build.log while it runs)"
if ! (cd "$work/p11glue" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	tail -n 40 "$work/build.log"
	echo "package check: dpkg-buildpackage failed"
	exit 1
fi
for deb in "$work"/*.deb; do
	echo "package check: built $(basename "$deb")"
	dpkg-deb -c "$deb" | awk '$NF !~ /\/$/ {print "    " $NF}'
done

echo "package check: apt-get install -y ./*.deb"
(cd "$work" && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq ./*.deb >/dev/null)
for p in "${packages[@]}"; do
	installed | grep -qx "$p" || { echo "package check: $p is not installed"; exit 1; }
done

echo "package check: the installed files"
scripts/check-install.sh /

echo "package check: the main job against the installed files"
scripts/main-job.sh --installed
