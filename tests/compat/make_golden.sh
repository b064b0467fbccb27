#!/usr/bin/env bash
# Writes one golden store of tests/compat/ with the library of an earlier
# commit, in the manner of RocksDB's tools/check_format_compatible.sh: the
# commit's tree (git archive, no worktree) is built in a scratch directory,
# only as far as its storage library and tests/compat/golden_writer.cc
# (compiled against it), and the writer's store is archived.
#
# Usage: tests/compat/make_golden.sh COMMIT NAME [workflows]
#   COMMIT     the commit whose library writes the store
#   NAME       tests/compat/golden/NAME.tar.gz and NAME.txt are (re)written
#   workflows  the commit has Store::Settle and workflows: the writer adds a
#              workflow half-way and one not started
# Environment: JOBS (default 2) parallel compile jobs. Takes ~5 min of
# 2-core CPU per commit. Needs the Debian packages of
# toolchains/install-deps.sh, as a build of that commit did.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
commit=$1
name=$2
flavor=${3:-}
repo=$(git rev-parse --show-toplevel)
golden="$repo/tests/compat/golden"
full=$(git -C "$repo" rev-parse --verify "$commit^{commit}")
work=$(mktemp -d "${TMPDIR:-/tmp}/outbox-golden-XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir "$work/src"
git -C "$repo" archive "$full" | tar -x -C "$work/src"
mkdir "$work/src/golden_writer"
cp "$repo/tests/compat/golden_writer.cc" "$work/src/golden_writer/"
defines=""
if [[ $flavor == workflows ]]; then defines="GOLDEN_WORKFLOWS"; fi
cat > "$work/src/golden_writer/CMakeLists.txt" <<CMAKE
add_executable(golden_writer golden_writer.cc)
target_include_directories(golden_writer PRIVATE \${PROJECT_SOURCE_DIR}
  \${PROJECT_BINARY_DIR})
target_link_libraries(golden_writer PRIVATE outbox outbox_proto
  \${OUTBOX_ROCKSDB})
target_compile_definitions(golden_writer PRIVATE ${defines})
CMAKE
echo 'add_subdirectory(golden_writer)' >> "$work/src/CMakeLists.txt"

cmake -S "$work/src" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOUTBOX_BUILD_TESTS=OFF > "$work/cmake.log"
ninja -C "$work/build" -j "${JOBS:-2}" golden_writer

out="$work/out"
mkdir -p "$out"
"$work/build/bin/golden_writer" "$out/store" > "$work/facts"
# RocksDB's own log files say nothing the test reads, and they are the
# largest files of a small store.
rm -f "$out/store"/LOG "$out/store"/LOG.old.*

holds="pending events (keyed, unkeyed, one to a named destination, one \
retried), two dead letters, one quarantined undecodable entry, two \
idempotency keys, one delivered event; table files and a log"
if [[ $flavor == workflows ]]; then
  holds="$holds; a workflow half-way (reserve done, ship marked sent) and \
one not started"
fi
{
  echo "# $name: written by edge-outbox commit ${full:0:12}" \
    "($(git -C "$repo" log -1 --format='%ad' --date=short "$full")," \
    "tests/compat/make_golden.sh $commit $name${flavor:+ $flavor})"
  echo "# holds: $holds"
  cat "$work/facts"
} > "$golden/$name.txt"
tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner \
  --mtime='2026-01-01 00:00Z' -czf "$golden/$name.tar.gz" store
ls -l "$golden/$name.tar.gz"
