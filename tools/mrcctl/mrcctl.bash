# SPDX-License-Identifier: GPL-2.0-only
# bash completion for mrcctl(8)

_mrcctl_keys="udp-port ev-count ev-port-min ev-port-max retire-losses ecn redundancy
probe-interval-ms min-rto-us max-rto-us init-cwnd user-timeout-ms dctcp-shift delay-target-us
urgent-dscp burst-max"

_mrcctl()
{
	local cur prev words cword obj i n
	_init_completion || return

	# skip the global options to find the object
	for ((i = 1; i < cword; i++)); do
		case "${words[i]}" in
		-n | -netns | --netns | -o | -output | --output) ((i++)) ;;
		-*) ;;
		*) obj=${words[i]}; break ;;
		esac
	done

	# run: its own flags, then any command and that command's completion
	if [[ $obj == run ]]; then
		for ((n = i + 1; n < cword; n++)); do
			if [[ ${words[n]} == -- ]] || [[ ${words[n]} != -* && ${words[n - 1]} != @(-p|-d|--ports|--dest) ]]; then
				[[ ${words[n]} == -- ]] && ((n++))
				_command_offset $n
				return
			fi
		done
		[[ $prev == @(-p|-d|--ports|--dest) ]] && return
		COMPREPLY=($(compgen -W "-p -d -v --" -- "$cur"))
		return
	fi
	if [[ $prev == @(-n|-netns|--netns) ]]; then
		COMPREPLY=($(compgen -W "$(ip netns list 2>/dev/null | awk '{print $1}')" -- "$cur"))
		return
	fi
	if [[ $prev == @(-o|-output|--output) ]]; then
		COMPREPLY=($(compgen -W "text json prometheus" -- "$cur"))
		return
	fi
	if [[ -z $obj ]]; then
		COMPREPLY=($(compgen -W "-j -p -o -n -h -V info config conn paths policy plane stats monitor trace run help" -- "$cur"))
		return
	fi
	n=$((cword - i))
	case $obj in
	config)
		if ((n == 1)); then
			COMPREPLY=($(compgen -W "show set" -- "$cur"))
		elif [[ ${words[i + 1]} == set ]] && (((n - 2) % 2 == 0)); then
			COMPREPLY=($(compgen -W "$_mrcctl_keys" -- "$cur"))
		elif [[ $prev == ecn ]]; then
			COMPREPLY=($(compgen -W "on off 0 1" -- "$cur"))
		fi
		;;
	conn)
		COMPREPLY=($(compgen -W "show -e evs id -o --per-conn" -- "$cur"))
		;;
	paths)
		((n == 1)) && COMPREPLY=($(compgen -W "show -o --per-ev" -- "$cur"))
		;;
	policy)
		if ((n == 1)); then
			COMPREPLY=($(compgen -W "show add del flush" -- "$cur"))
		elif [[ ${words[i + 1]} == add ]]; then
			[[ $prev == @(peer|ports) ]] ||
				COMPREPLY=($(compgen -W "peer ports exclude pin" -- "$cur"))
		elif [[ ${words[i + 1]} == del ]]; then
			COMPREPLY=($(compgen -W "id $(mrcctl -j policy show 2>/dev/null |
				grep -o '"id":[0-9]*' | cut -d: -f2)" -- "$cur"))
		fi
		;;
	plane)
		if ((n == 1)); then
			COMPREPLY=($(compgen -W "show add del" -- "$cur"))
		elif ((n == 2)) && [[ ${words[i + 1]} == add ]]; then
			COMPREPLY=($(compgen -W "$(ip -o addr show scope global 2>/dev/null |
				awk '{sub("/.*", "", $4); print $4}')" -- "$cur"))
		elif ((n == 2)) && [[ ${words[i + 1]} == del ]]; then
			COMPREPLY=($(compgen -W "$(mrcctl plane show 2>/dev/null |
				awk '!/ default /{print $3}')" -- "$cur"))
		fi
		;;
	stats)
		COMPREPLY=($(compgen -W "-a -z -s -r -o" -- "$cur"))
		;;
	monitor)
		COMPREPLY=($(compgen -W "-t count" -- "$cur"))
		;;
	trace)
		if ((n == 1)); then
			COMPREPLY=($(compgen -W "start show" -- "$cur"))
		elif ((n == 3)) && [[ ${words[i + 1]} == start ]]; then
			COMPREPLY=($(compgen -W "max-ttl" -- "$cur"))
		elif ((n == 3)) && [[ ${words[i + 1]} == show ]]; then
			COMPREPLY=($(compgen -W "-w" -- "$cur"))
		fi
		;;
	esac
} &&
	complete -F _mrcctl mrcctl
