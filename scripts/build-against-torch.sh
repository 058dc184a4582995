#!/usr/bin/env bash
# Builds `bao` against a libtorch other than the 2.13.0 that tch 0.26 is made for: for a GPU
# machine whose own torch is another version and where 2.13.0 cannot be installed (no registry
# reachable). A binary built against 2.13.0 headers does NOT work with another libtorch's
# libraries even when every symbol resolves: tensor layouts differ (measured: a 4x8 @ 8x2
# matmul reported shape [] against torch 2.11), so it must be compiled against the headers
# of the libtorch it will run with.
#
# It copies torch-sys's source, replaces the generated wrappers of operators this libtorch
# lacks by ones that raise an error if called (bao calls none of them; the list is found by
# compiling the wrapper file once), and builds with that copy patched in through cargo's
# --config (Cargo.toml is not touched). Run it on a machine that can build the crate; copy
# the binary to the GPU machine and run it with LD_LIBRARY_PATH=TORCH_DIR/lib (as
# scripts/gpu-check.sh does through TORCH_LIB).
#
# Usage: scripts/build-against-torch.sh TORCH_DIR [TARGET_DIR]
#   TORCH_DIR   a folder with include/ and lib/: a torch wheel's torch/ folder (pip download
#               torch==X --no-deps; unzip), or a libtorch archive
#   TARGET_DIR  cargo's target folder for this build (default target/torch-<version>)
# Output: TARGET_DIR/release/bao
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_DIR="$(cd "${1:?usage: scripts/build-against-torch.sh TORCH_DIR [TARGET_DIR]}" && pwd)"
[ -d "$TORCH_DIR/include" ] && [ -d "$TORCH_DIR/lib" ] || { echo "$TORCH_DIR has no include/ and lib/" >&2; exit 1; }
VERSION="$(sed -n "s/^__version__ = '\(.*\)'/\1/p" "$TORCH_DIR/version.py" 2>/dev/null || echo custom)"
TARGET="${2:-target/torch-$VERSION}"
mkdir -p "$TARGET"
TARGET="$(cd "$TARGET" && pwd)"

SRC="$(cargo metadata --format-version 1 --locked 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "torch-sys":
        print(p["manifest_path"].rsplit("/", 1)[0])')"
[ -n "$SRC" ] || { echo "cannot find torch-sys's source (cargo fetch first)" >&2; exit 1; }
COPY="$TARGET/torch-sys-src"
rm -rf "$COPY"
cp -r "$SRC" "$COPY"
GEN="$COPY/libtch/torch_api_generated.cpp"

echo "build-against-torch: finding the operators torch $VERSION lacks (compiling the wrappers once)" >&2
ERRORS="$TARGET/wrapper-errors.txt"
LC_ALL=C g++ -fsyntax-only -std=c++17 -D_GLIBCXX_USE_CXX11_ABI=1 -DGLOG_USE_GLOG_EXPORT \
    -I "$TORCH_DIR/include" -I "$TORCH_DIR/include/torch/csrc/api/include" \
    -I "$COPY/libtch" "$GEN" 2> "$ERRORS" || true
python3 - "$GEN" "$ERRORS" <<'PY'
import re, sys
gen, errors = sys.argv[1], sys.argv[2]
bad = sorted(set(re.findall(r"In function '[^']*?\b(atg_\w+)\(", open(errors).read())))
text = open(gen).read()
for name in bad:
    # `void atg_NAME(args) {\n  PROTECT(\n ... \n  )\n}` -> a body that raises.
    pattern = re.compile(r"(\n[^\n]*\b%s\([^)]*\) \{\n)  PROTECT\(\n.*?\n  \)\n\}" % re.escape(name), re.S)
    text, n = pattern.subn(lambda m: m.group(1) + '  PROTECT(\n    throw std::runtime_error("%s: not in this libtorch");\n  )\n}' % name, text, count=1)
    if n != 1:
        sys.exit(f"cannot stub {name}")
open(gen, "w").write(text)
print(f"build-against-torch: stubbed {len(bad)} wrappers: {' '.join(bad)}", file=sys.stderr)
PY

# The patch rewrites the lock file, so the build runs in a copy of the crate.
CRATE="$TARGET/crate"
rm -rf "$CRATE"
mkdir -p "$CRATE"
cp -r Cargo.toml Cargo.lock build.rs src web "$CRATE/"
echo "build-against-torch: building into $TARGET" >&2
(cd "$CRATE" && env -u LIBTORCH_USE_PYTORCH LIBTORCH="$TORCH_DIR" LIBTORCH_BYPASS_VERSION_CHECK=1 \
    LIBTORCH_CXX11_ABI=1 CARGO_TARGET_DIR="$TARGET" \
    cargo build --release --bin bao --config "patch.crates-io.torch-sys.path=\"$COPY\"")
echo "build-against-torch: $TARGET/release/bao (run with LD_LIBRARY_PATH=$TORCH_DIR/lib or the GPU machine's own torch lib/)" >&2
