# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Section "prof" of tools/bench/guest.sh: where the guest's CPU goes on the
# cost case (one unconstrained path).  perf samples every CPU while one MRC
# and one TCP transfer run; the report keeps the top symbols, and the
# counters give packets and ACKs per data packet.  Sourced by guest.sh after
# the two-host fabric is up and pinned to spine 1.
PROF_BYTES=${MRC_BENCH_PROF_BYTES:-$((64 << 20))}
# the idle loop's symbols: left out of the busy samples
idle_re='safe_halt|default_idle|cpu_idle'
log "profile: one path, perf record -a -g, $((PROF_BYTES >> 20)) MiB each"
if ! command -v perf > /dev/null; then
	log "  no perf (Debian linux-perf): section skipped"
else
	for p in mrc tcp; do
		bytes=$PROF_BYTES; [ $p = tcp ] && bytes=$((PROF_BYTES * 4))
		r=$TMPD/prof_$p.rx
		"$MRCCTL" -n $NS_A stats -a > "$TMPD/prof_a0" 2>&1
		"$MRCCTL" -n $NS_B stats -a > "$TMPD/prof_b0" 2>&1
		# a fixed period: under TCG, frequency mode (-F) settles on a few samples
		k=$(kind_of $p)
		xfer_start $NS_B 7000 "$r" $k || continue
		c0=$(cpu_busy)
		perf record -q -a -g -e cpu-clock -c 1000000 -o "$TMPD/perf_$p.data" -- \
			ip netns exec $NS_A ./mrc_xfer $k -c $B4 -p 7000 -n $bytes > "$r.tx" 2>&1
		wait $XFER_PID
		c1=$(cpu_busy)
		"$MRCCTL" -n $NS_A stats -a > "$TMPD/prof_a1" 2>&1
		"$MRCCTL" -n $NS_B stats -a > "$TMPD/prof_b1" 2>&1
		{
			echo "# $p: $(tail -n 1 "$r"); guest busy $((c1 - c0)) jiffies"
			for h in a b; do
				awk -v h=$h 'FNR == NR { v[$1] = $2; next }
					$1 ~ /^(TxPackets|RxPackets|Retransmits|RxDup|TxBursts|RxBatches|RxTrains)$/ { printf "# %s %s +%d\n", h, $1, $2 - v[$1] }' \
					"$TMPD/prof_${h}0" "$TMPD/prof_${h}1"
			done
			# percentages of the busy samples: the idle loop left out
			perf report -i "$TMPD/perf_$p.data" --stdio --no-children --sort sym -g none \
				2> /dev/null | awk -v idle_re="$idle_re" '/^ +[0-9.]+%/ { sub(/%/, "", $1)
					if ($3 ~ idle_re) { idle += $1; next }
					n++; pct[n] = $1; $1 = ""; name[n] = $0; busy += pct[n] }
				END { printf "# idle %.1f%% of samples; below: %% of the busy ones\n", idle
					for (i = 1; i <= n && i <= 60; i++)
						if (busy > 0 && pct[i] * 100 / busy >= 0.5)
							printf "%6.2f%% %s\n", pct[i] * 100 / busy, name[i] }'
			# which CPU does the work: the idle loop's share of each says
			# whether one CPU is the limit while the other waits
			echo "# by CPU (% of all samples, and of them the idle loop's)"
			perf report -i "$TMPD/perf_$p.data" --stdio --no-children --sort cpu,sym -g none \
				2> /dev/null | awk '/^ +[0-9.]+%/' > "$TMPD/cpu_$p.txt"
			awk -v idle_re="$idle_re" '{ sub(/%/, "", $1)
					all[$2] += $1; if ($4 ~ idle_re) idle[$2] += $1 }
				END { for (c in all) printf "    cpu %s %.1f%% (idle %.1f%%)\n", c, all[c], idle[c] }' \
				"$TMPD/cpu_$p.txt" | sort
			awk -v idle_re="$idle_re" -v lim="${MRC_BENCH_PROF_PERCPU:-12}" \
				'$4 !~ idle_re && n[$2]++ < lim { printf "      cpu %s %s %s\n", $2, $1, $4 }' \
				"$TMPD/cpu_$p.txt"
			echo "# by task (% of all samples)"
			perf report -i "$TMPD/perf_$p.data" --stdio --no-children --sort comm -g none \
				2> /dev/null | awk '/^ +[0-9.]+%/' | head -n 6
			echo "# by object (% of all samples)"
			perf report -i "$TMPD/perf_$p.data" --stdio --no-children --sort dso -g none \
				2> /dev/null | awk '/^ +[0-9.]+%/' | head -n 8
		} > "$OUT/profile_$p.txt"
		# who calls the top kernel symbols (MRC_BENCH_PROF_CALLERS="sym,sym")
		if [ -n "${MRC_BENCH_PROF_CALLERS:-}" ]; then
			perf report -i "$TMPD/perf_$p.data" --stdio --no-children \
				-S "$MRC_BENCH_PROF_CALLERS" -g graph,0.5,callee,function,percent 2> /dev/null |
				grep -v "^$" | head -n 400 > "$OUT/callers_$p.txt"
		fi
		# inclusive shares (self and callees) of chosen symbols
		# (MRC_BENCH_PROF_INCLUSIVE="sym,sym"), % of all samples
		if [ -n "${MRC_BENCH_PROF_INCLUSIVE:-}" ]; then
			perf report -i "$TMPD/perf_$p.data" --stdio --children -g none \
				--sort sym 2> /dev/null |
				awk -v want=",$MRC_BENCH_PROF_INCLUSIVE," '/^ +[0-9.]+%/ &&
					index(want, "," $4 ",")' > "$OUT/inclusive_$p.txt"
		fi
		log "  $p: $(tail -n 1 "$r")"
		rm -f "$TMPD/perf_$p.data" "$TMPD/cpu_$p.txt"
	done
fi
