# Counts TAP test results, nested or not, from KUnit or kselftest output.
# Only leaf results are counted: a result line is a leaf unless it closes a
# subtest block (a deeper "1..N" plan was seen since the previous result at
# its own depth).  Prints "passed failed skipped".
function depth(line) { match(line, /^ */); return RLENGTH }
{
	sub(/^\[ *[0-9.]+\] /, "")	# strip a kernel log prefix "[ 1.23] "
	sub(/\r$/, "")
}
/^ *1\.\.[0-9]+/ { plan[depth($0)] = 1; next }
/^ *(not )?ok [0-9]+/ {
	d = depth($0)
	if (plan[d + 4] || plan[d + 2]) { plan[d + 4] = 0; plan[d + 2] = 0; next }
	if ($0 ~ /# *SKIP/) s++
	else if ($0 ~ /^ *not ok/) f++
	else p++
}
END { printf "%d %d %d\n", p, f, s }
