# shellcheck shell=bash disable=SC2034,SC2154  # build, top: the caller's
# Running the MPI test programs (selftests/mpi/) under Debian's Open MPI
# in the MPI suites (mpi_test.sh, mpi_two_guests.sh); sourced, not run,
# after tap.sh, with top and build set.
#
#   mpi_init HOSTFILE NET the mpirun options for MPI_TRANSPORT in the array
#                         mpi_opts (launch through mpi_rsh_agent.sh with
#                         HOSTFILE, traffic on the IPv4 subnet NET);
#                         false, with mpi_skip_reason set, if
#                         that transport cannot run here
#   mpi_run NAME NP PROG [ARGS...]
#                         runs PROG on NP ranks, spread round-robin over
#                         the hostfile's nodes (so rank r and r ^ 1 are on
#                         different nodes); each of its TAP lines becomes
#                         one of ours, prefixed "NAME:", then one line for
#                         the run (exit status 0, a plan that matches)
#   mpi_hpcc NAME NP      HPC Challenge (Debian's hpcc) on NP ranks, small
#                         problem sizes, its own verification checked
#   mpi_where NP A B...   the ranks are where the hostfile puts them
#   mpi_netpipe NAME      NetPIPE's MPI build on 2 ranks: an integrity
#                         check, then latency and bandwidth up to 1 MiB
#
# MPI_TRANSPORT:
#   ptl (default)  pml cm + mtl ofi over the ptl libfabric provider,
#                  $build/ofi/libptl-fi.so (FI_PROVIDER_PATH, FI_PROVIDER=ptl,
#                  opal_common_ofi_provider_include=ptl); skipped while
#                  that file does not exist
#   tcp            Open MPI's own pml ob1 + btl tcp over the same links
#                  (the namespaces' veth carries IP too): proves the
#                  launcher and the programs in the guest
# MPI_TIMEOUT: seconds one mpirun may take (default 600).
# MPI_MCA: more Open MPI parameters, "NAME VALUE [NAME VALUE...]" (for
# example "mpi_yield_when_idle 1"), given to every mpirun as --mca.
# MPI_TEST_SKIP: passed to the programs (tests to skip by key, see
# selftests/mpi/mpi_tap.h).

mpi_transport=${MPI_TRANSPORT:-ptl}
mpi_timeout=${MPI_TIMEOUT:-600}
mpi_bin=$build/selftests/mpi
mpi_agent=$top/selftests/mpi_rsh_agent.sh
mpi_skip_reason=
mpi_opts=()

mpi_init() {
	local hostfile=$1 net=$2

	mpi_opts=(--allow-run-as-root --hostfile "$hostfile" --map-by node
		# launch: the daemons through our agent (no ssh), one level
		--mca plm_rsh_agent "$mpi_agent" --mca plm_rsh_no_tree_spawn 1
		# mpirun's and the daemons' own traffic on the test link
		--mca oob_tcp_if_include "$net"
		# one-sided windows as point-to-point messages
		--mca osc pt2pt)
	local v
	for v in MPI_TEST_SKIP UNEXPECTED_COUNT FI_LOG_LEVEL $(compgen -e | grep '^FI_PTL_'); do
		[ -n "${!v:-}" ] && mpi_opts+=(-x "$v")
	done
	local mca i
	read -ra mca <<<"${MPI_MCA:-}"
	for ((i = 0; i + 1 < ${#mca[@]}; i += 2)); do
		mpi_opts+=(--mca "${mca[i]}" "${mca[i + 1]}")
	done
	case $mpi_transport in
	ptl)
		if [ ! -e "$build/ofi/libptl-fi.so" ]; then
			mpi_skip_reason="no $build/ofi/libptl-fi.so (the ptl provider is not built)"
			return 1
		fi
		mpi_opts+=(-x "FI_PROVIDER_PATH=$build/ofi" -x FI_PROVIDER=ptl
			--mca pml cm --mca mtl ofi
			--mca opal_common_ofi_provider_include ptl
			--mca btl self)
		;;
	tcp)
		mpi_opts+=(--mca pml ob1 --mca btl "self,tcp" --mca btl_tcp_if_include "$net")
		;;
	*)
		mpi_skip_reason="MPI_TRANSPORT=$mpi_transport: expected ptl or tcp"
		return 1
		;;
	esac
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	# No ssh anywhere, no other Open MPI configuration of the host's.
	export OMPI_MCA_plm_rsh_agent=$mpi_agent
	return 0
}

# mpi_exec NP OUT CMD...: mpirun with our options; output to OUT.
mpi_exec() {
	local np=$1 out=$2
	shift 2
	timeout -k 10 "$mpi_timeout" mpirun "${mpi_opts[@]}" -np "$np" \
		--timeout "$mpi_timeout" "$@" >"$out" 2>&1
}

mpi_run() {
	local name=$1 np=$2 out=/tmp/mpi-$1-$2.out rc t0 plan=0 n=0 line d
	shift 2

	t0=$SECONDS
	mpi_exec "$np" "$out" "$@"
	rc=$?
	# Timed out: the caller's clues (mpi_on_timeout), if it has any.
	[ "$rc" -ne 124 ] || ! declare -F mpi_on_timeout >/dev/null || mpi_on_timeout
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP"*)
			d=${line#*- }
			skip "$name ($np ranks): ${d%% # SKIP*}" MPI_TEST_SKIP
			n=$((n + 1))
			;;
		"ok "*)
			report 0 "$name ($np ranks): ${line#*- }"
			n=$((n + 1))
			;;
		"not ok "*)
			report 1 "$name ($np ranks): ${line#*- }"
			n=$((n + 1))
			;;
		1..*)
			plan=${line#1..}
			plan=${plan%% *}
			;;
		*) echo "#   $line" ;;
		esac
	done <"$out"
	[ "$rc" -eq 0 ] && [ "$plan" -gt 0 ] && [ "$plan" -eq "$n" ]
	report $? "$name on $np ranks: exit $rc, $n of $plan results, $((SECONDS - t0)) s"
}

# mpi_hpcc NAME NP: Debian's hpcc (HPC Challenge) with a small problem
# (HPL N=500 on a 1 x NP/2 .. 2 x NP/2 grid), its own checks: HPL's
# residual, PTRANS, STREAM's validation, RandomAccess's error fraction
# (HPCC allows 1 %), FFT's error, and its summary's Success=1.
mpi_hpcc() {
	local name=$1 np=$2 dir=/tmp/hpcc-$2 p=1 q rc t0 f ok=0
	q=$((np / p))
	[ "$np" -ge 4 ] && p=2 && q=$((np / 2))
	mkdir -p "$dir" && cd "$dir" || return 1
	sed -e '6s/.*/500          Ns/' -e "11s/.*/$p            Ps/" \
		-e "12s/.*/$q            Qs/" /usr/share/doc/hpcc/examples/_hpccinf.txt >hpccinf.txt
	t0=$SECONDS
	mpi_exec "$np" hpcc.log hpcc
	rc=$?
	f=hpccoutf.txt
	if [ "$rc" -ne 0 ] || [ ! -s "$f" ]; then
		grep -v verify_filter_names hpcc.log | tail -20 | sed 's/^/#   /'
		# Where it was: the phase its output file reached.
		[ -s "$f" ] && echo "# the end of $f:" && tail -12 "$f" | sed 's/^/#   /'
		ok=1
	else
		grep -q '^Success=1$' $f || { echo "# no Success=1"; ok=1; }
		grep -qE '^ +0 tests completed and failed residual checks' $f ||
			{ echo "# HPL failed its residual checks"; ok=1; }
		! grep -qE 'FAILED|\(failed\)' $f || { grep -E 'FAILED|\(failed\)' $f | sed 's/^/# /'; ok=1; }
		grep -q 'Solution Validates' $f || { echo "# STREAM did not validate"; ok=1; }
		awk -F= '/^MPIRandomAccess_ErrorsFraction=/ { bad = $2 > 0.01 } END { exit bad }' $f ||
			{ echo "# RandomAccess errors over 1 %"; ok=1; }
		awk -F= '/^MPIFFT_maxErr=/ { bad = $2 > 1e-10 } END { exit bad }' $f ||
			{ echo "# MPIFFT error too large"; ok=1; }
		grep -E '^(HPL_Tflops|MinPingPongLatency_usec|MaxPingPongBandwidth_GBytes|RandomlyOrderedRingLatency_usec|RandomlyOrderedRingBandwidth_GBytes)=' $f |
			sed 's/^/#   /'
	fi
	cd - >/dev/null || return 1
	report $ok "$name: hpcc on $np ranks ($p x $q), its verification passes ($((SECONDS - t0)) s)"
}

# mpi_netpipe NAME: NetPIPE (NPopenmpi) between two ranks on two nodes.
mpi_netpipe() {
	local name=$1 rc t0=$SECONDS

	mpi_exec 2 /tmp/netpipe-i.log NPopenmpi -i -n 3 -u 1048576 -o /tmp/netpipe-i.out
	rc=$?
	! grep -q 'Integrity check failed' /tmp/netpipe-i.log && [ "$rc" -eq 0 ] &&
		grep -q 'Integrity check passed' /tmp/netpipe-i.log
	rc=$?
	[ "$rc" -eq 0 ] || tail -5 /tmp/netpipe-i.log | sed 's/^/#   /'
	report $rc "$name: NetPIPE integrity check, 1 B .. 1 MiB ($((SECONDS - t0)) s)"
	t0=$SECONDS
	mpi_exec 2 /tmp/netpipe.log NPopenmpi -u 1048576 -n 20 -p 0 -o /tmp/netpipe.out
	rc=$?
	[ "$rc" -eq 0 ] && [ -s /tmp/netpipe.out ]
	rc=$?
	[ "$rc" -eq 0 ] || tail -5 /tmp/netpipe.log | sed 's/^/#   /'
	# The whole curve with the guest's other output, when there is one.
	[ -n "${VM_OUT:-}" ] && cp /tmp/netpipe.out "$VM_OUT/netpipe-$name.out"
	# bytes, Mbps, seconds per one-way message
	awk '$1 == 8 || $1 == 1024 || $1 == 65536 || $1 == 1048576 {
		printf "#   %8d B: %9.2f Mbps, %10.2f us\n", $1, $2, $3 * 1e6 }' /tmp/netpipe.out
	report $rc "$name: NetPIPE latency and bandwidth, 1 B .. 1 MiB ($((SECONDS - t0)) s)"
}

# mpi_where NP ADDR...: NP ranks through the launcher, each telling its
# host name and its node's IPv4 addresses; with N addresses rank r must be
# on the node that has the (r mod N)th: the ranks really are in the
# namespaces (or guests) the hostfile names, round-robin.
mpi_where() {
	local np=$1 out=/tmp/mpi-where.out r line rc ok=0
	shift
	local want=("$@")

	# shellcheck disable=SC2016  # expanded by the ranks' bash
	mpi_exec "$np" "$out" bash -c 'echo "where $OMPI_COMM_WORLD_RANK $(hostname)" \
		$(ip -4 -o addr show scope global | awk "{ print \$4 }")'
	rc=$?
	for ((r = 0; r < np; r++)); do
		line=$(grep "^where $r " "$out") || { echo "# rank $r did not answer"; ok=1; continue; }
		echo "#   $line"
		[[ " $line" == *" ${want[r % $#]}/"* ]] || ok=1
	done
	[ "$rc" -eq 0 ] || { tail -5 "$out" | sed 's/^/#   /'; ok=1; }
	if [ $# -eq 2 ]; then
		report $ok "$np ranks alternate between the nodes ($1, $2)"
	else
		report $ok "$np ranks go round-robin over the $# nodes ($1 .. ${!#})"
	fi
}
