#!/usr/bin/env bash
# install.sh: the library as others use it. `cmake --install` into a temporary prefix (from the
# suite's build, EB_BUILD_DIR, or a fresh build when unset), then: the prefix holds the CLI, the
# man page, the library static and shared, the public headers and efabench.pc, and nothing of
# the tests (efabench-floor); every installed header compiles on its own and includes only
# installed headers; examples/split_write.c built with `pkg-config --cflags --libs efabench`
# against the prefix (not the build tree) runs on shm and tcp, also linked statically and
# through examples/Makefile; put_signal (CUDA) is built when nvcc exists and run when a GPU is.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/efabench-install.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

build=${EB_BUILD_DIR:-}
if [ -z "$build" ]; then
	build=$WORK/build
	echo "# building into $build"
	cmake -S "$src" -B "$build" -DBUILD_TESTING=OFF >"$WORK/cfg.log" 2>&1 ||
		{ cat "$WORK/cfg.log"; fail "cmake configure"; }
	cmake --build "$build" -j"$(nproc)" >"$WORK/build.log" 2>&1 ||
		{ tail -40 "$WORK/build.log"; fail "cmake --build"; }
fi
# The suite's build is already built (ctest runs after the build): install only, so this
# test never rebuilds binaries other tests are running.
prefix=$WORK/prefix
cmake --install "$build" --prefix "$prefix" >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "cmake --install $build"; }

# What lands where.
pcdir=$(dirname "$(find "$prefix" -name efabench.pc -path '*/pkgconfig/*' | head -1)")
[ -f "$pcdir/efabench.pc" ] || fail "no efabench.pc under $prefix"
libdir=$(dirname "$pcdir")
for f in bin/efabench share/man/man1/efabench.1 include/efabench/engine.h; do
	[ -e "$prefix/$f" ] || fail "$f not installed"
done
[ -x "$prefix/bin/efabench" ] || fail "bin/efabench is not executable"
[ -f "$libdir/libefabench.a" ] || fail "no static library in $libdir"
ls "$libdir"/libefabench.so* >/dev/null 2>&1 || fail "no shared library in $libdir"
# shellcheck disable=SC2012
[ "$(ls "$prefix/bin")" = efabench ] || fail "bin holds more than efabench: $(ls "$prefix/bin" | tr '\n' ' ')"
for h in "$src"/include/efabench/*.h; do
	[ -f "$prefix/include/efabench/$(basename "$h")" ] || fail "$(basename "$h") not installed"
done
"$prefix/bin/efabench" --help >/dev/null || fail "the installed efabench --help failed"

export PKG_CONFIG_PATH=$pcdir
pkg-config --exists efabench || fail "pkg-config does not find efabench in $pcdir"
pc_cflags=$(pkg-config --cflags efabench)
pc_libs=$(pkg-config --libs efabench)
echo "# pkg-config --cflags --libs efabench: $pc_cflags $pc_libs"
case " $pc_cflags $pc_libs " in
*"$build"* | *"$src/"*) fail "pkg-config points into the build or source tree" ;;
esac
[ "$(pkg-config --modversion efabench)" = "$(sed -n 's/^project(efabench VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ] ||
	fail "efabench.pc's version is not the project's"

# Public headers: each includes only installed efabench headers and system headers, and
# compiles alone (gpuq_proto.h needs POSIX's clock_gettime: -std=c11 gets _POSIX_C_SOURCE).
for h in "$prefix"/include/efabench/*.h; do
	name=$(basename "$h")
	while read -r inc; do
		[ -f "$prefix/include/$inc" ] || fail "$name includes \"$inc\", which is not installed"
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$h")
	for std in "-std=gnu11" "-std=c11 -D_POSIX_C_SOURCE=200809L"; do
		# shellcheck disable=SC2086
		echo "#include <efabench/$name>" | cc $std -Wall -Wextra -Werror $pc_cflags -x c \
			-fsyntax-only - 2>"$WORK/hdr.err" ||
			{ cat "$WORK/hdr.err"; fail "efabench/$name does not compile on its own ($std)"; }
	done
done

# split_write against the installed prefix: shared (the default link), then static.
# shellcheck disable=SC2086
cc -std=c11 -O2 -Wall -Wextra -Werror "$src/examples/split_write.c" $pc_cflags $pc_libs \
	-Wl,-rpath,"$libdir" -o "$WORK/split_write" || fail "split_write does not build against $prefix"
ldd "$WORK/split_write" | grep -q "$libdir/libefabench.so" ||
	fail "split_write is not linked with the installed libefabench.so"
priv=$(sed -n 's/^Libs.private: //p' "$pcdir/efabench.pc")
# shellcheck disable=SC2046,SC2086
cc -std=c11 -O2 "$src/examples/split_write.c" $pc_cflags -L"$libdir" -l:libefabench.a \
	$(pkg-config --libs libfabric) $priv -o "$WORK/split_write_static" ||
	fail "split_write does not link with libefabench.a and efabench.pc's Libs.private"
! ldd "$WORK/split_write_static" | grep -q libefabench || fail "the static link used libefabench.so"

run() { # provider program args...
	local prov=$1
	shift
	FI_PROVIDER=$prov FI_SOCKETS_PE_WAITTIME=0 timeout 60 "$@" >"$WORK/out" 2>"$WORK/err"
	local rc=$?
	cat "$WORK/out"
	cat "$WORK/err" >&2
	[ $rc -eq 0 ] || fail "FI_PROVIDER=$prov $* exited $rc"
	grep -q "over .* channels of provider $prov.*: every byte right" "$WORK/out" ||
		fail "FI_PROVIDER=$prov $*: no 'every byte right' line"
}
for prov in shm tcp; do
	run $prov "$WORK/split_write"                     # 16 MiB, one channel per NIC
	run $prov "$WORK/split_write" 1000003 3           # 3 channels, remainders everywhere
	run $prov "$WORK/split_write_static" 65536 2
done

# examples/Makefile, as a user runs it (put_signal too where nvcc is).
cp -r "$src/examples" "$WORK/ex"
rm -f "$WORK/ex/split_write" "$WORK/ex/put_signal"
nvcc=$(command -v nvcc || command -v /usr/local/cuda/bin/nvcc || true)
make -C "$WORK/ex" NVCC="$nvcc" >"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; fail "make -C examples"; }
run tcp "$WORK/ex/split_write" 4096 2
if [ -z "$nvcc" ]; then
	echo "SKIP (part): put_signal: no nvcc"
elif ! { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q "^GPU"; }; then
	echo "# put_signal built with $nvcc against $prefix"
	echo "SKIP (part): put_signal not run: no CUDA GPU on this machine"
else
	for bytes in 4194304 1000; do
		timeout 60 "$WORK/ex/put_signal" "$bytes" || fail "put_signal $bytes exited $?"
	done
fi
echo "PASS"
