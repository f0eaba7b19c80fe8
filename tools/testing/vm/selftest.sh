#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Selftest of the VM runner itself (runs on the host): exit status passes
# through, a kernel WARNING fails a passing command, a hung guest is killed,
# socket(AF_MRC) autoloads the module inside the guest; kver.sh picks a
# kernel whose image and headers both exist; a broken KVM (simulated by a
# fake qemu on PATH) falls back to TCG, and the verdict is cached; a guest
# that dies or hangs before the command start is booted again, one that dies
# after it fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
results=${RESULTS:-$repo/results}/vm
mkdir -p "$results"
: > "$results/output.log"
kver=${MRC_KVER:-$(bash "$repo/tools/kver.sh")}
. "$repo/tools/testing/tap.sh"

make -s -C "/usr/src/linux-headers-$kver" M="$here/splat" modules >/dev/null ||
	{ echo "vm selftest: cannot build splat module" >&2; exit 1; }

vm() { bash "$here/run-vm.sh" "$@" >> "$results/output.log" 2>&1; }
# retries OUTDIR: the boots it retried (nothing when run-vm.sh wrote none:
# num then fails the case)
retries() { cat "$1/boot-retries" 2>/dev/null; }

tap_plan 21
vm -o "$results/exit" -t 120 'exit 7'
tap_result $(( $? == 7 )) "exit status of the command passes through"

vm -o "$results/pass" -t 120 'true'
rc=$?
echo "# accelerator: $(cat "$results/pass/accel" 2>/dev/null)"
tap_result $(( rc == 0 )) "a passing command with a clean kernel log passes"
grep -Eq '^(kvm|tcg)' "$results/pass/accel" 2>/dev/null
tap_result $(( $? == 0 )) "the run records its accelerator in OUTDIR/accel"

vm -o "$results/warn" -t 120 "insmod $here/splat/splat.ko"
rc=$?
grep -q 'WARNING:.*splat' "$results/warn/console.log"
tap_result $(( rc == 126 && $? == 0 )) "a kernel WARNING fails the run although the command passed (rc=$rc)"
r=$(retries "$results/warn")
num r
tap_result $(( r == 0 )) "a splat after the command start is a result, not a boot death (retries $r)"

vm -o "$results/hang" -t 25 'sleep 1000'
tap_result $(( $? == 124 )) "a hung guest is killed at the timeout and reported"
! pgrep -f "path=$results/hang" >/dev/null
tap_result $(( $? == 0 )) "no qemu is left running after the timeout"

MRC_NO_LOAD=1 vm -o "$results/autoload" -t 120 \
	"! grep -q '^mrc ' /proc/modules && $repo/selftests/mrc/af_probe && grep -q '^mrc ' /proc/modules"
tap_result $(( $? == 0 )) "socket(AF_MRC) autoloads mrc.ko through modprobe"

# kver.sh: the headers may be a newer point release than the image.
k=$(mktemp -d)
mkdir -p "$k/boot" "$k/src/linux-headers-6.12.10+deb13-amd64" \
	"$k/src/linux-headers-6.12.9+deb13-amd64" "$k/src/linux-headers-6.12.9+deb13-common"
touch "$k/boot/vmlinuz-6.12.9+deb13-amd64" "$k/boot/vmlinuz-6.12.8+deb13-amd64"
v=$(MRC_BOOT_DIR=$k/boot MRC_SRC_DIR=$k/src bash "$repo/tools/kver.sh" 2>/dev/null)
tap_result $([ "$v" = 6.12.9+deb13-amd64 ] && echo 1 || echo 0) \
	"kver.sh skips newer headers without an image (picked '$v')"
rm "$k/boot/vmlinuz-6.12.9+deb13-amd64"
msg=$(MRC_BOOT_DIR=$k/boot MRC_SRC_DIR=$k/src bash "$repo/tools/kver.sh" 2>&1 >/dev/null)
rc=$?
rm -rf "$k"
tap_result $(( rc != 0 )) "kver.sh fails when no version has both image and headers: ${msg%%$'\n'*}"

# A fake qemu on PATH breaks KVM the two ways seen on real machines: it
# aborts ("failed to set MSR 0x10a") or hangs ("KVM internal error.
# Suberror: 1"); "ok" runs the guest under TCG as a working KVM would:
# single-threaded, as multi-threaded TCG can die in early boot on the
# kernel's own code patching (run-vm.sh), and the probe (no boot retries)
# then fell back to TCG once in CI (rc=125 after 7 s).
fake=$results/fake-qemu
rm -rf "$fake"
mkdir -p "$fake/bin"
cat > "$fake/bin/qemu-system-x86_64" <<-EOF
	#!/bin/bash
	echo "\$*" >> "$fake/calls"
	case " \$* " in
	*" -accel kvm "*)
		case \$FAKE_KVM in
		fail) echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x0" >&2; exit 1 ;;
		hang) echo "KVM internal error. Suberror: 1" >&2; exec sleep 1000 ;;
		silent) exec sleep 1000 ;;
		esac
		args=()
		while [ \$# -gt 0 ]; do
			case \$1 in
			-accel) args+=(-accel tcg,thread=single); shift ;;
			-cpu) args+=(-cpu max,la57=off); shift ;;
			*) args+=("\$1") ;;
			esac
			shift
		done
		exec $(command -v qemu-system-x86_64) "\${args[@]}" ;;
	esac
	exec $(command -v qemu-system-x86_64) "\$@"
EOF
chmod +x "$fake/bin/qemu-system-x86_64"
: > "$fake/kvm"
# fakevm MODE [VAR=VALUE...] ARGS...: run-vm.sh with the fake qemu, a
# writable fake /dev/kvm, its own verdict cache and nothing forcing an
# accelerator but the VAR=VALUE given; qemu's command lines go to calls
fakevm() {
	local mode=$1 vars=()
	shift
	while [ $# -gt 0 ] && [[ $1 == *=* ]]; do vars+=("$1"); shift; done
	env -u MRC_NO_KVM -u MRC_ACCEL PATH="$fake/bin:$PATH" FAKE_KVM=$mode \
		MRC_KVM_DEV="$fake/kvm" MRC_ACCEL_CACHE="$fake/cache-$mode" \
		MRC_ACCEL_PROBE_TIMEOUT=15 "${vars[@]}" bash "$here/run-vm.sh" "$@"
}
kvm_calls() { grep -c -- '-accel kvm' "$fake/calls" 2>/dev/null; }

: > "$fake/calls"
fakevm fail -o "$results/kvm-fail" -t 120 true > "$results/kvm-fail.log" 2>&1
rc=$?
a=$(cat "$results/kvm-fail/accel" 2>/dev/null)
grep -q '^run-vm: accelerator tcg' "$results/kvm-fail.log"
tap_result $(( rc == 0 && $? == 0 )) "a KVM that aborts falls back to TCG, the run passes and says so (rc=$rc, $a)"
grep -q '^tcg' "$fake"/cache-fail/accel-* 2>/dev/null
tap_result $(( $? == 0 )) "the verdict is cached for this host boot"
: > "$fake/calls"
v=$(fakevm fail -A 2>/dev/null)
calls=$(kvm_calls)
num calls
tap_result $(( calls == 0 )) "a cached verdict is not probed again ($v)"

s=$SECONDS
: > "$fake/calls"
fakevm hang -o "$results/kvm-hang" -t 120 true > "$results/kvm-hang.log" 2>&1
rc=$?
a=$(cat "$results/kvm-hang/accel" 2>/dev/null)
calls=$(kvm_calls)
num calls
tap_result $(( rc == 0 && calls == 1 )) \
	"a KVM that hangs after an emulation error falls back to TCG (rc=$rc, $((SECONDS - s)) s, $a)"
s=$SECONDS
v=$(fakevm silent -A 2>/dev/null)
tap_result $([ "${v%%:*}" = tcg ] && echo 1 || echo 0) \
	"a KVM that hangs silently is given up at the probe timeout ($((SECONDS - s)) s, $v)"

# (its "KVM" is TCG underneath: a whole boot, not a KVM one's few seconds)
v=$(fakevm ok MRC_ACCEL_PROBE_TIMEOUT=240 -A 2>/dev/null)
tap_result $([ "$v" = kvm ] && echo 1 || echo 0) "a KVM whose probe boot passes is used ($v)"
: > "$fake/calls"
rm -rf "$fake/cache-ok"
v1=$(fakevm ok MRC_ACCEL=tcg -A 2>/dev/null)
v2=$(fakevm ok MRC_NO_KVM=1 -A 2>/dev/null)
v3=$(fakevm fail MRC_ACCEL=kvm -A 2>/dev/null)
calls=$(kvm_calls)
num calls
tap_result $([ "${v1%%:*}${v2%%:*}${v3%%:*}" = tcgtcgkvm ] && [ "$calls" = 0 ] && echo 1 || echo 0) \
	"MRC_ACCEL=tcg|kvm and MRC_NO_KVM=1 force one without probing ($v1; $v2; $v3)"

# Boot deaths: the guest panics before the command start on attempt 1 only.
# These cases count retries, so they run single-threaded TCG: multi-threaded
# TCG's own early-boot deaths (code patching, retried in real runs) added a
# retry to the provoked one in a landing CI ("retries 2").
export MRC_TCG_THREAD=single
MRC_TEST_BOOT_DEATH=1 vm -o "$results/bootdeath" -t 120 true
rc=$?
grep -q 'Kernel panic' "$results/bootdeath/console.attempt1.log" 2>/dev/null &&
	grep -q 'mrc-vm: command start (attempt 2)' "$results/bootdeath/console.log"
kept=$(( $? == 0 ))
r=$(retries "$results/bootdeath")
num r
tap_result $(( rc == 0 && kept && r == 1 )) \
	"a guest dying before the command start is booted again, both consoles kept (rc=$rc, retries $r)"

MRC_BOOT_RETRIES=1 MRC_TEST_BOOT_DEATH=9 vm -o "$results/bootdeath-always" -t 120 true
rc=$?
r=$(retries "$results/bootdeath-always")
num r
tap_result $(( rc != 0 && r == 1 )) "a guest dying at every boot fails after the retries (rc=$rc, retries $r)"

vm -o "$results/cmddeath" -t 120 'echo c > /proc/sysrq-trigger'
rc=$?
r=$(retries "$results/cmddeath")
num r
tap_result $(( rc == 125 && r == 0 )) "a guest dying after the command start fails, no retry (rc=$rc, retries $r)"

MRC_BOOT_TIMEOUT=${MRC_TEST_HANG_BOOT_TIMEOUT:-60} MRC_TEST_BOOT_HANG=1 \
	vm -o "$results/boothang" -t 200 true
rc=$?
r=$(retries "$results/boothang")
num r
tap_result $(( rc == 0 && r == 1 )) \
	"a boot hanging before the command start is killed and booted again (rc=$rc, retries $r)"

unset MRC_TCG_THREAD
n=0
for d in "$results"/*/; do [ -f "$d/boot-retries" ] && n=$((n + $(cat "$d/boot-retries"))); done
echo "# boot retries: $n (of them 3 provoked)"
tap_done
