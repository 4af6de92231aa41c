#!/usr/bin/env bash
# Build one cargo-fuzz target and run it for SECONDS with its committed seed corpus.
#
#   fuzz/run.sh TARGET SECONDS [extra libFuzzer flags…]
#   targets: decode_adapter decode_v3 reply_assembler media_assembler session safe_filename outbox wav
#
# Needs only stable Rust and the cargo-fuzz binary (`cargo install cargo-fuzz --locked`). cargo-fuzz passes
# nightly-only rustc flags (-Zsanitizer=address, coverage passes); RUSTC_BOOTSTRAP=1 makes stable rustc accept them.
# Seeds (fuzz/seeds/TARGET, committed) are copied into the working corpus (fuzz/corpus/TARGET, gitignored).
# A crash exits non-zero and leaves the input in fuzz/artifacts/TARGET/.
set -euo pipefail

usage() { echo "usage: $0 TARGET SECONDS [libFuzzer flags…]" >&2; exit 2; }
[ $# -ge 2 ] || usage
target=$1
secs=$2
shift 2
case $secs in '' | *[!0-9]*) usage ;; esac

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
[ -d "seeds/$target" ] || { echo "unknown target '$target' (no fuzz/seeds/$target)" >&2; exit 2; }
command -v cargo-fuzz >/dev/null 2>&1 || { echo "cargo-fuzz missing: cargo install cargo-fuzz --locked" >&2; exit 2; }

export RUSTC_BOOTSTRAP=1
# Where cargo-fuzz builds and looks for the binaries (not the caller's CARGO_TARGET_DIR: other flags, other crates).
export CARGO_TARGET_DIR="${HERMES_FUZZ_TARGET_DIR:-$here/target}"

mkdir -p "corpus/$target"
cp -n "seeds/$target"/* "corpus/$target"/ 2>/dev/null || true

# --debug-assertions: overflow checks and debug_assert! are on while fuzzing.
cargo fuzz build --debug-assertions "$target"
exec cargo fuzz run --debug-assertions "$target" "corpus/$target" -- \
  -max_total_time="$secs" -max_len=16384 -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 "$@"
