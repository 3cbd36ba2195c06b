# budget-stages.awk: sorts the samples of `perf script` into the stages of
# a small message's path, for tools/testing/bench/budget-netbench.
#
#   perf script -F comm,time,ip,sym,dso --ns --no-demangle -i perf.data |
#       awk -v start=NS -v end=NS -f budget-stages.awk
#
# perf.data recorded with --clockid=CLOCK_MONOTONIC; only samples taken
# from start to end (ns, CLOCK_MONOTONIC: ptl_netbench --timed-window)
# count, so the set-up of the run (connecting, allocating) is left out.
# Each sample's call chain is read from the leaf towards the root; the
# first frame whose function matches a stage's pattern names the stage,
# so a lock taken by the wake-up counts as wake-up, and an allocation made
# while a frame is built counts as buffer allocation. A chain that
# matches nothing counts by where its leaf is: the program, a library, or
# "other kernel". Samples of perf itself, and of ptl_netbench's jitter
# spin (--jitter), are left out.
#
# Output: one line per stage, "stage<TAB>samples", in path order, then
# "total<TAB>samples" and the ten most sampled leaf functions of
# "other kernel" as "# other: samples function" (for refining the rules).

BEGIN {
	# -v libsyms=FILE: the functions of libptl-user (nm of its archive),
	# which is linked into the programs statically.
	if (libsyms != "")
		while ((getline line < libsyms) > 0)
			libsym[line] = 1
	n = 0
	# Path order: a message leaves the user program, crosses the kernel
	# and the link, and wakes the program at the other end.
	rule("user program", "")
	rule("libptl-user", "")
	rule("libc and libstdc++", "")
	rule("syscall entry and exit", "^(entry_SYSCALL|do_syscall_64|syscall_exit|syscall_enter|exit_to_user_mode|__x64_sys_ioctl$|__x64_sys_(send|recv|sendto|recvfrom|write|read|poll|ppoll)$|syscall_return|restore_regs|entry_SYSRETQ|switch_fpu|fpregs_|fpu__|__fdget|fdget|__fget|fput)")
	rule("ioctl dispatch", "^(ptl_dev_call_user|ptl_ioctl_data|ptl_ioctl|do_vfs_ioctl|security_file_ioctl|tomoyo_|apparmor_file|ptl_kput|ptl_kget)")
	rule("argument copy", "^(ptl_copy_in|ptl_copy_out|_copy_from_user|_copy_to_user|copy_user|rep_movs_alternative|__get_user|__put_user|copy_from_iter|_copy_from_iter|copy_to_iter|_copy_to_iter|simple_copy_to_iter|__skb_datagram_iter|skb_copy_datagram)")
	rule("handle and peer lookups", "^(ptl_ni_get|ptl_ni_put|ptlc_handle_slot|ptl_ni_lookup|ptlc_htab_|ptlc_md_lookup|ptlc_eq_lookup|ptlc_ni_handle|ptl_ioctl_handle_ni|rtscts_peer_lookup|rtscts_peer_get|ptl_binding_peer|xa_load|idr_find|tipc_sk_lookup|tipc_nametbl_|tipc_node_find|tipc_sk_get|tipc_net_)")
	rule("socket layer (peers)", "^(sock_|__sock_|sockfd_lookup|security_socket|__skb_recv|skb_recv|__skb_try_recv|__skb_wait|skb_free_datagram|___sys_|__sys_)")
	rule("core: put/get and the message", "^(ptl_remote_request|ptl_request_build|ptl_hdr_encode|ptl_local_|ptlc_put|ptlc_get|ptlc_getput|ptlc_msg_start|ptlc_msg_reset|ptlc_md_|ptl_msg_alloc|ptl_msg_free|ptl_msg_hdr|ptl_msg_len|ptl_msg_sent|ptl_msg_cb|ptl_binding_|ptlc_acl_|ptlc_ni_)")
	rule("protocol: send logic", "^(tipc_sendmsg|__tipc_sendmsg|tipc_send_|tipc_msg_build|tipc_node_xmit|tipc_link_xmit|tipc_bearer_xmit|tipc_l2_send_msg|rtscts_send$|rtscts_push|rtscts_queue_|rtscts_tx_|rtscts_credit_|rtscts_window|rtscts_next_frame|rtscts_txf_|rtscts_resolve|rtscts_busy|rtscts_mtu|rtscts_frame_room)")
	rule("frame build", "^(rtscts_build|rtscts_finish_frame|rtscts_seal_frame|rtscts_frame_encode|rtscts_alloc_skb|rtscts_fill_ack|rtscts_hdr_len|dev_hard_header|eth_header|packet_snd|packet_sendmsg|tpacket_snd|udp_sendmsg|udp_send_skb|ip_make_skb|ip_append_data|__ip_append_data|ip_send_skb|ip_local_out|__ip_local_out|ip_output|ip_finish_output|__ip_finish_output|ip_finish_output2|neigh_|ip_route_output|ip_route|fib_|ip_setup_cork|udp4_hwcsum|ip_generic_getfrag|__ip_make_skb|ip_copy_addrs)")
	rule("checksum", "^(rtscts_crc32c|rtscts_frame_crc|rtscts_frame_set_crc|crc32c|__crc32c|crc32_|crypto_shash|chksum|crc_pcl|crc32c_pcl|shash_|csum_partial|skb_checksum|__skb_checksum|csum_|rtscts_pcsum|rtscts_payload_csum)")
	rule("buffer allocation and free", "^(ptl_user_charge|ptl_user_uncharge|__alloc_skb|alloc_skb|kmalloc_reserve|__kmalloc|kmalloc|kmem_cache_alloc|kmem_cache_free|kfree|__kfree_skb|kfree_skb|consume_skb|skb_release|skb_free_head|__slab_free|___slab_alloc|__slab_alloc|build_skb|__build_skb|napi_skb_cache|skb_clone|__skb_clone|sock_alloc_send|sock_wfree|sock_rfree|skb_set_owner|page_frag)")
	rule("device transmit", "^(__dev_queue_xmit|dev_queue_xmit|dev_hard_start_xmit|validate_xmit|netdev_core_pick_tx|rtscts_xmit|packet_direct_xmit|netif_skb_features|skb_network_protocol|__netdev_pick_tx|netdev_pick_tx|qdisc_pkt_len|skb_csum_hwoffload)")
	rule("veth", "^veth_")
	rule("stack receive", "^(__netif_rx|netif_rx|enqueue_to_backlog|process_backlog|__netif_receive_skb|netif_receive_skb|net_rx_action|__do_softirq|do_softirq|__local_bh_enable_ip|local_bh_enable|deliver_skb|eth_type_trans|napi_|skb_defer|__napi|gro_|dev_forward_skb|__dev_forward_skb|netif_rx_internal|rps_|ip_rcv|ip_rcv_core|ip_rcv_finish|ip_local_deliver|ip_protocol_deliver|ip_sublist|ip_list_rcv|nf_hook|raw_local_deliver|packet_rcv|tpacket_rcv|run_filter|sk_filter)")
	rule("protocol: receive and decode", "^(tipc_rcv|tipc_l2_rcv_msg|tipc_sk_rcv|tipc_link_rcv|tipc_node_rcv|tipc_recvmsg|tipc_sk_filter|tipc_sk_enqueue|tipc_data_input|tipc_skb_|rtscts_rcv|rtscts_frame_decode|rtscts_rx_|rtscts_in_order|rtscts_deliver|rtscts_frame_news|rtscts_on_ack|rtscts_frame_acked|rtscts_learn|rtscts_drain_ooo|rtscts_ooo_|rtscts_rx_incarnation|udp_rcv|__udp4_lib|udp_queue_rcv|__udp_queue_rcv|udp_unicast|__udp_enqueue|udp_recvmsg|udp_rmem|packet_recvmsg|sock_def_readable|__skb_flow_dissect)")
	rule("core: match", "^(ptl_hdr_decode|ptl_msg_src_|ptlc_receive|ptlc_match_request|ptlc_me_matches|ptlc_md_accepts|ptlc_mh_bucket|ptl_binding_rx|ptl_rx_)")
	rule("deposit (copy into the MD)", "^(ptl_mem_|ptl_cursor|ptl_msg_deposit|ptl_msg_copy|ptlc_md_iter|ptl_copy|skb_copy_bits)")
	rule("event write", "^(ptlc_event_|ptlc_eq_write|ptlc_msg_finalize|ptlc_msg_post_start|ptl_eq_notify|ptl_keq_notify|ptlc_md_end_events|ptlc_md_start_events|ptlc_md_other_events)")
	rule("timers and acknowledgements", "^(__hrtimer_run_queues|hrtimer_run_softirq|__run_hrtimer|rtscts_ack_soon|rtscts_ack_timer_fn|rtscts_timer|rtscts_send_ack|rtscts_tail_probe|mod_timer|__mod_timer|hrtimer_start|hrtimer_try_to_cancel|hrtimer_cancel|del_timer|lock_timer_base|internal_add_timer|run_timer|__run_timers|call_timer_fn)")
	rule("wake-up, sleep and switch", "^(try_to_wake_up|__wake_up|wake_up_|ttwu_|enqueue_task|enqueue_entity|activate_task|check_preempt|resched_curr|select_task_rq|sched_ttwu|autoremove_wake|default_wake|pollwake|__pollwait|woken_wake|__schedule|schedule$|schedule_|pick_next|dequeue_task|dequeue_entity|__switch_to|switch_mm|finish_task_switch|context_switch|put_prev|set_next_entity|prepare_to_wait|finish_wait|wait_woken)")
	rule("EQ wait and poll", "^(ptl_eq_wait_watches|ptl_eq_wait_on|ptlc_eq_info|ptl_ioctl_eq_wait|ptl_eq_wait|ptl_eq_poll|ptl_eq_scan|ptl_keq_wait|do_sys_poll|do_poll|__x64_sys_poll|ep_|do_epoll)")
	rule("interrupts and idle", "^(asm_|sysvec_|__sysvec|irq_|handle_irq|hrtimer_interrupt|__hrtimer_run|tick_|default_idle|cpu_idle|do_idle|native_safe_halt|pv_native_safe_halt|arch_cpu_idle|cpuidle)")
	rule("protocol: other", "^(rtscts_|tipc_)")
	rule("core: other", "^ptl")
	rule("other kernel", "")
	nchain = 0
}

function rule(name, re) {
	n++
	stage_name[n] = name
	stage_re[n] = re
	count[name] = 0
}

# The stage of the chain held in fn[1..nchain] (leaf first), dso[].
function classify(   i, k, f) {
	decided = "(user)"
	for (i = 1; i <= nchain; i++) {
		f = fn[i]
		if (dso[i] != "[kernel.kallsyms]" && dso[i] !~ /\.ko/)
			continue
		for (k = 1; k <= n; k++)
			if (stage_re[k] != "" && f ~ stage_re[k]) {
				decided = f
				return stage_name[k]
			}
	}
	if (nchain == 0)
		return "other kernel"
	# A sample that fell due while the kernel returned to user space
	# (interrupts off) is taken at the first user instruction: the one
	# after the system call in its libc wrapper.
	if (fn[1] ~ /^(ioctl|__GI___ioctl|__libc_(send|recv|sendto|recvfrom|write|read)|send|recv|sendto|recvfrom|__GI___(send|recv|sendto|recvfrom))$/)
		return "syscall entry and exit"
	# libptl-user is linked into the programs: its functions by name.
	if (dso[1] ~ /libptl-user/ || fn[1] in libsym)
		return "libptl-user"
	if (dso[1] ~ /ptl_netbench/) {
		if (detail)
			user[fn[1]]++
		return "user program"
	}
	if (dso[1] ~ /lib(c|stdc\+\+|m|pthread)[.-]/ || dso[1] ~ /ld-linux/)
		return "libc and libstdc++"
	if (dso[1] != "[kernel.kallsyms]" && dso[1] !~ /\.ko/ && dso[1] != "[unknown]")
		return "libc and libstdc++"
	other[fn[1]]++
	return "other kernel"
}

function flush(   s) {
	# ptl_netbench --jitter's spin is not part of the message's path.
	if (in_sample && comm != "perf" && fn[1] != "ptl_netbench_jitter_spin") {
		s = classify()
		count[s]++
		total++
		# The function that decided, and the leaf, for -v detail=1.
		if (detail)
			why[s SUBSEP decided " <- " fn[1]]++
	}
	nchain = 0
	in_sample = 0
}

# "COMM SECONDS.NANOSECONDS:" (the time is the last field).
/^[^ \t]/ {
	flush()
	comm = $1
	t = $NF
	sub(/:$/, "", t)
	split(t, part, ".")
	t = part[1] * 1000000000 + part[2]
	in_sample = t >= start + 0 && (end == "" || t <= end + 0)
	next
}

/^[ \t]+[0-9a-f]+ / {
	nchain++
	# "ADDR SYMBOL+OFF (DSO)": the symbol without its offset
	f = $2
	sub(/\+0x[0-9a-f]+$/, "", f)
	sub(/\.(cold|isra\.[0-9]+|part\.[0-9]+|constprop\.[0-9]+)$/, "", f)
	fn[nchain] = f
	d = $NF
	gsub(/[()]/, "", d)
	dso[nchain] = d
	next
}

/^$/ {
	flush()
}

END {
	flush()
	for (k = 1; k <= n; k++)
		printf "%s\t%d\n", stage_name[k], count[stage_name[k]]
	printf "total\t%d\n", total
	if (detail) {
		for (w in why) {
			split(w, p, SUBSEP)
			printf "# %s\t%d\t%s\n", p[1], why[w], p[2] | "sort -t'\t' -k1,1 -k2,2nr"
		}
		close("sort -t'\t' -k1,1 -k2,2nr")
		for (f in user)
			printf "# user program: %d %s\n", user[f], f
	}
	m = 0
	for (f in other)
		m++
	for (i = 0; i < 10 && m > 0; i++) {
		best = ""
		for (f in other)
			if (best == "" || other[f] > other[best])
				best = f
		if (best == "")
			break
		printf "# other: %d %s\n", other[best], best
		delete other[best]
	}
}
