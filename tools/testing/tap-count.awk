# Counts TAP test results, nested or not, from KUnit or kselftest output.
# Only leaf results are counted: a result line is a leaf unless it closes a
# subtest block (a deeper "1..N" plan was seen since the previous result at
# its own depth).  Prints "passed failed skipped".
#
# The plan is enforced, so that a test cannot pass by not running: every
# result a "1..N" plan announced and that never came (a crash, a timeout, a
# case whose line an error dropped) counts as failed, and so does every
# result beyond it; a log whose outermost results have no plan, or that has
# neither plan nor result, counts one failure.  Nested blocks without a plan
# (KUnit's parameterised cases) are taken as they come.  What was missing
# is said on stderr, "# tap-count: ...".
#
# -v strict=1 (make check): a skipped result counts as failed too, unless
# its reason starts with "env:" (tap_skip_env, tools/testing/tap.sh: a skip
# that legitimately depends on the machine and says why) or "n/a:" (a case
# that does not apply to its variant, e.g. transfer_test's stream-only case
# of the seqpacket variant); make deps installs every tool and the VM
# builds every fabric, so any other skip is a test that did not run.
function depth(line) { match(line, /^ */); return RLENGTH }
function warn(msg) { printf "# tap-count: %s\n", msg > "/dev/stderr" }
# close_block(D): the block at depth D ends; its results against its plan
function close_block(d) {
	if (d in plan) {
		if (n[d] < plan[d]) {
			warn(sprintf("planned %d results at depth %d, got %d: %d missing, counted failed",
				     plan[d], d, n[d], plan[d] - n[d]))
			f += plan[d] - n[d]
		} else if (n[d] > plan[d]) {
			warn(sprintf("planned %d results at depth %d, got %d: %d beyond the plan, counted failed",
				     plan[d], d, n[d], n[d] - plan[d]))
			f += n[d] - plan[d]
		}
	} else if (n[d] > 0 && d == top) {
		warn(sprintf("%d results at depth %d without a plan (1..N): counted one failure", n[d], d))
		f++
	}
	delete plan[d]
	n[d] = 0
}
BEGIN { top = -1; deepest = 0 }
{
	sub(/^\[ *[0-9.]+\] /, "")	# strip a kernel log prefix "[ 1.23] "
	sub(/\r$/, "")
}
/^ *1\.\.[0-9]+/ {
	d = depth($0)
	if (top < 0 || d < top) top = d
	# a second plan at this depth starts a new stream (the first one ends);
	# a plan after its results (TAP allows it at the end) only sets it
	if (d in plan) close_block(d)
	if (d > deepest) deepest = d
	match($0, /\.\.[0-9]+/)
	plan[d] = substr($0, RSTART + 2, RLENGTH - 2) + 0
	any = 1
	next
}
/^ *(not )?ok [0-9]+/ {
	d = depth($0)
	if (top < 0 || d < top) top = d
	any = 1
	if (d > deepest) deepest = d
	# a result closes every deeper block; it is a subtest's own result,
	# not a leaf, when one of them had a plan
	sub_closed = 0
	for (i = d + 1; i <= deepest; i++) {
		if (i in plan) sub_closed = 1
		close_block(i)
	}
	n[d]++
	if (sub_closed) next
	if ($0 ~ /# *SKIP/) {
		if (strict && $0 !~ /# *SKIP:? *(env|n\/a):/) {
			warn("a skip under make check, counted failed: " $0)
			f++
		} else {
			s++
		}
	} else if ($0 ~ /^ *not ok/) f++
	else p++
}
END {
	for (i = 0; i <= deepest; i++) close_block(i)
	if (!any) {
		warn("neither a plan nor a result: counted one failure")
		f++
	}
	printf "%d %d %d\n", p, f, s
}
