# insn-stages.awk: sorts insn_budget's exact per-function counts (one file
# per transport: "instructions<TAB>function<TAB>where", the "total" line
# last) into the parts of a small message's path, side by side, for
# tools/testing/bench/insn-budget.
#
#   awk -v names="raw tipc portals" -f insn-stages.awk raw.tsv tipc.tsv portals.tsv
#
# The counts are self counts (the instructions of the function itself, not
# of what it calls), so shared helpers (memset, memcpy, the slab allocator,
# locks, list checks) are rows of their own rather than charged to their
# callers: exact, where the sampled budget's stages are estimates.
# Output: a Markdown table, one row per part in path order, then the total.

BEGIN {
	FS = "\t"
	nrules = 0
	rule("user program", "@program")
	rule("libptl-user", "@libptl")
	rule("libc and libstdc++", "@lib")
	rule("syscall entry and exit", "^(entry_SYSCALL|do_syscall_64|syscall_exit|syscall_enter|exit_to_user_mode|__x64_sys_|syscall_return|restore_regs|entry_SYSRETQ|switch_fpu|fpregs_|fpu__|__fdget|fdget|__fget|fput|__static_call_text_end|__sys_(sendto|recvfrom|sendmsg|recvmsg)|__fget_light)")
	rule("security hooks (LSM)", "^(security_|tomoyo_|apparmor_|aa_|__check_object_size|check_stack_object|__virt_addr_valid|check_heap_object)")
	rule("ioctl dispatch and argument copy", "^(ptl_dev_call_user|ptl_ioctl|do_vfs_ioctl|ptl_copy_in|ptl_copy_out|_copy_from_user|_copy_to_user|copy_user|rep_movs_alternative|__get_user|__put_user|ptl_ioc_)")
	rule("handle and peer lookups", "^(ptl_ni_get|ptl_ni_put|ptlc_handle_slot|ptl_ni_lookup|ptlc_htab_|ptlc_md_lookup|ptlc_eq_lookup|ptlc_ni_handle|ptl_ioctl_handle_ni|rtscts_peer_lookup|rtscts_peer_get|ptl_binding_peer|xa_load|idr_find|tipc_sk_lookup|tipc_nametbl_|tipc_node_find|tipc_sk_get|tipc_net_|rhashtable_)")
	rule("socket layer (peers)", "^(sock_|__sock_|sockfd_lookup|__skb_recv|skb_recv|__skb_try_recv|__skb_wait|skb_free_datagram|___sys_|lock_sock|release_sock|__release_sock|_copy_from_iter|_copy_to_iter|copy_from_iter|copy_to_iter|__skb_datagram_iter|skb_copy_datagram|simple_copy_to_iter|import_single_range)")
	rule("core: put/get and the message", "^(ptl_remote_request|ptl_request_build|ptl_hdr_encode|ptl_local_|ptlc_put|ptlc_get|ptlc_getput|ptlc_msg_start|ptlc_msg_reset|ptlc_md_|ptl_msg_alloc|ptl_msg_free|ptl_msg_hdr|ptl_msg_len|ptl_msg_sent|ptl_msg_cb|ptl_binding_|ptlc_acl_|ptlc_ni_|ptl_data_call|ptlc_msg_init|ptlc_send)")
	rule("protocol: send", "^(tipc_sendmsg|__tipc_sendmsg|tipc_send_|tipc_msg_build|tipc_node_xmit|tipc_link_xmit|tipc_lxc_xmit|rtscts_send$|rtscts_push|rtscts_queue_|rtscts_tx_|rtscts_credit_|rtscts_window|rtscts_next_frame|rtscts_txf_|rtscts_resolve|rtscts_busy|rtscts_mtu|rtscts_frame_room|__rtscts_xmit|rtscts_xmit|packet_sendmsg|packet_snd|udp_sendmsg|udp_send_skb|ip_|__ip_|neigh_|fib_|dst_|inet_)")
	rule("frame build and decode", "^(rtscts_build|rtscts_finish_frame|rtscts_seal_frame|rtscts_frame_encode|rtscts_frame_decode|rtscts_alloc_skb|rtscts_fill_ack|rtscts_hdr_len|dev_hard_header|eth_header|eth_type_trans|tipc_msg_|skb_put|skb_push|skb_pull)")
	rule("checksum", "^(rtscts_crc32c|rtscts_frame_crc|rtscts_frame_set_crc|crc32c|__crc32c|crc32_|crypto_shash|crc_pcl|crc32c_pcl|shash_|csum_partial|skb_checksum|__skb_checksum|csum_|rtscts_pcsum)")
	rule("slab and skb allocation", "^(__alloc_skb|alloc_skb|kmalloc_reserve|__kmalloc|kmalloc|kmem_cache_alloc|__kmem_cache_alloc|kmem_cache_free|__kmem_cache_free|kfree|__kfree_skb|kfree_skb|consume_skb|skb_release|skb_free_head|__slab_free|___slab_alloc|__slab_alloc|build_skb|__build_skb|__napi_build_skb|napi_skb_cache|skb_clone|__skb_clone|sock_alloc_send|sock_wfree|sock_rfree|skb_set_owner|page_frag|__page_frag|napi_alloc|netdev_alloc|__netdev_alloc|mod_objcg|obj_cgroup|refill_obj_stock|__memcg|memcg_slab|should_failslab|slab_|skb_headers_offset|__copy_skb_header|put_page|__put_page|free_unref_page|skb_attempt_defer)")
	rule("memset and memcpy", "^(memset|memcpy|memmove|__memset|__memcpy|clear_page)")
	rule("device and veth", "^(__dev_queue_xmit|dev_queue_xmit|dev_hard_start_xmit|validate_xmit|netdev_core_pick_tx|netif_skb_features|skb_network_protocol|__netdev_pick_tx|netdev_pick_tx|qdisc_pkt_len|skb_csum_hwoffload|veth_|passthru_features_check|skb_tx_hash)")
	rule("stack receive", "^(__netif_rx|netif_rx|enqueue_to_backlog|process_backlog|__netif_receive_skb|netif_receive_skb|net_rx_action|__do_softirq|do_softirq|handle_softirqs|__local_bh_enable_ip|local_bh_enable|__local_bh_disable|deliver_skb|napi_|skb_defer|__napi|gro_|dev_forward_skb|__dev_forward_skb|____dev_forward_skb|netif_rx_internal|rps_|raw_local_deliver|packet_rcv|tpacket_rcv|run_filter|sk_filter|__raise_softirq|raise_softirq|skb_scrub_packet|__skb_flow_dissect|skb_flow_dissect|dev_forward)")
	rule("protocol: receive", "^(tipc_rcv|tipc_l2_rcv_msg|tipc_sk_rcv|tipc_link_rcv|tipc_node_rcv|tipc_recvmsg|tipc_sk_filter|tipc_sk_enqueue|tipc_data_input|tipc_skb_|rtscts_rcv|rtscts_rx_|rtscts_in_order|rtscts_deliver|rtscts_frame_news|rtscts_on_ack|rtscts_frame_acked|rtscts_learn|rtscts_drain_ooo|rtscts_ooo_|rtscts_rx_incarnation|udp_rcv|__udp4_lib|udp_queue_rcv|__udp_queue_rcv|udp_unicast|__udp_enqueue|udp_recvmsg|udp_rmem|packet_recvmsg|sock_def_readable|tipc_)")
	rule("core: match and deposit", "^(ptl_hdr_decode|ptl_msg_src_|ptlc_receive|ptlc_match_request|ptlc_me_matches|ptlc_md_accepts|ptlc_mh_bucket|ptl_binding_rx|ptl_rx_|ptl_mem_|ptl_cursor|ptl_msg_deposit|ptl_msg_copy|ptlc_md_iter|ptl_copy|skb_copy_bits)")
	rule("event write", "^(ptlc_event_|ptlc_eq_write|ptlc_msg_finalize|ptlc_msg_post_start|ptl_eq_notify|ptl_keq_notify|ptlc_md_end_events|ptlc_md_start_events|ptlc_md_other_events|ptlc_eq_)")
	rule("timers and clocks", "^(hrtimer_|__hrtimer|__remove_hrtimer|enqueue_hrtimer|timerqueue_|rtscts_ack_|rtscts_timer|rtscts_send_ack|rtscts_tail_probe|mod_timer|__mod_timer|del_timer|lock_timer_base|internal_add_timer|detach_if_pending|run_timer|__run_timers|call_timer_fn|ktime_get|clockevents_|lapic_|native_sched_clock|sched_clock|read_tsc|tick_|get_nohz_timer_target|calc_wheel_index|enqueue_timer|timer_)")
	rule("wake-up, sleep and switch", "^(try_to_wake_up|__wake_up|wake_up_|ttwu_|enqueue_task|enqueue_entity|activate_task|check_preempt|resched_curr|select_task_rq|sched_ttwu|autoremove_wake|default_wake|pollwake|__pollwait|woken_wake|__schedule|schedule$|schedule_|pick_next|dequeue_task|dequeue_entity|__switch_to|switch_mm|finish_task_switch|context_switch|put_prev|set_next_entity|prepare_to_wait|finish_wait|wait_woken|psi_|update_load_avg|__update_load_avg|update_curr|update_cfs|reweight|place_entity|__enqueue_entity|__dequeue_entity|update_rq_clock|update_min_vruntime|check_spread|clear_buddies|set_next_buddy|__calc_delta|account_|cpuacct_|cgroup_rstat|avg_vruntime|newidle|sched_|pick_|rb_|__rb_|hrtick|wakeup_|ttwu|migrate_|kick_|perf_event_task|__perf_event_task|vtime_|cr4_|load_new_mm|leave_mm|__cgroup_account|native_load|update_blocked|set_task_cpu|__update_idle|idle_)")
	rule("EQ wait and poll", "^(ptl_eq_|ptlc_eq_info|ptl_ioctl_eq_wait|ptl_keq_wait|do_sys_poll|do_poll|__x64_sys_poll|ep_|do_epoll)")
	rule("locks, RCU and list checks", "^(_raw_spin|__raw_spin|queued_spin|native_queued|_raw_read|_raw_write|__list_add_valid|__list_del_entry_valid|list_|rcu_|__rcu_|preempt_|__cond_resched|_cond_resched|mutex_|__mutex)")
	rule("interrupts and idle", "^(asm_|sysvec_|__sysvec|irq_|handle_irq|hrtimer_interrupt|default_idle|cpu_idle|do_idle|native_safe_halt|pv_native_safe_halt|arch_cpu_idle|cpuidle|irqentry_|ct_|__irq_|native_apic|x2apic)")
	rule("protocol: other", "^(rtscts_)")
	rule("core: other", "^ptl")
	rule("other kernel", "")
}

function rule(name, re) {
	nrules++
	rname[nrules] = name
	rre[nrules] = re
}

function part(fn, where,   k, re) {
	sub(/\.(cold|isra\.[0-9]+|part\.[0-9]+|constprop\.[0-9]+)$/, "", fn)
	if (where !~ /^(vmlinux|\[.*\])$/) {
		if (where ~ /^lib(c|stdc\+\+|m|pthread)[.-]/ || where ~ /^ld-linux/)
			return "libc and libstdc++"
		if (fn ~ /^(Ptl|_ZN3ptl|_ZNK3ptl|_ZN12_GLOBAL__N_1(7Dequeue|4Wait|4Scan|4Spin))/)
			return "libptl-user"
		if (where == "user" || where == "")
			return "syscall entry and exit"  # the vDSO and unmapped
		return "user program"
	}
	for (k = 4; k <= nrules; k++) {
		re = rre[k]
		if (re == "" || fn ~ re)
			return rname[k]
	}
	return "other kernel"
}

FNR == 1 { col++ }
$2 == "total" { total[col] = $1; next }
{ sum[part($2, $3), col] += $1 }

END {
	n = split(names, name, " ")
	printf "| part (instructions per round trip) |"
	for (c = 1; c <= n; c++) printf " %s |", name[c]
	printf "\n|---|"
	for (c = 1; c <= n; c++) printf "---:|"
	printf "\n"
	for (k = 1; k <= nrules; k++) {
		line = "| " rname[k] " |"
		any = 0
		for (c = 1; c <= n; c++) {
			v = sum[rname[k], c]
			if (v > 0.5 || v < -0.5) any = 1
			line = line sprintf(" %s |", (v > 0.5 || v < -0.5) ? sprintf("%.0f", v) : "-")
		}
		if (any) print line
	}
	printf "| **round trip** |"
	for (c = 1; c <= n; c++) printf " **%.0f** |", total[c]
	printf "\n"
}
