// SPDX-License-Identifier: GPL-2.0
/*
 * Super-frames: the frames of one burst to one peer cross the host's stack
 * as one skb, as TCP's segments cross it as 64 KB GSO packets.
 *
 * Sending (rtscts_chain): the first frame of a burst is the head skb; the
 * frames queued after it with the same link header go on the head's
 * frag_list, each a whole Ethernet frame with its own header, sequence
 * number and checksum. The head says SKB_GSO_FRAGLIST, so the stack hands
 * it whole to every device that advertises NETIF_F_GSO_FRAGLIST (veth, a
 * bridge of veths) and the receiving node's stack gets one skb for the
 * burst: the device transmit, the backlog queue and the receive dispatch
 * are paid once per burst instead of once per frame. Where a device
 * cannot carry it (a NIC without the feature, a qdisc that segments:
 * netem corrupting, tbf), the stack cuts it with the packet_offload
 * registered here for the ethertype, which gives back the frames as they
 * were built (skb_segment_list). Nothing on the wire changes.
 *
 * Receiving (rtscts_unchain): the frames are taken off the head and each
 * is received as if it had come alone, Ethernet header included.
 *
 * The offload list is the host's, not a namespace's, and a packet_offload
 * takes over software segmentation of every GSO skb of its ethertype. So
 * only the two ethertypes IEEE 802 sets aside for local experiments (the
 * default 0x88B5, and 0x88B6) get one: no protocol of the kernel uses
 * them, and an interface bound with any other ethertype, which a user in
 * its own namespace may choose, sends its frames one by one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "rtscts.h"

static struct sk_buff *rtscts_gso_segment(struct sk_buff *skb,
					  netdev_features_t features)
{
	struct sk_buff *segs, *seg;

	/* Ours are fraglists of whole frames; no other kind is cut here. */
	if (!(skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST) ||
	    !skb_has_frag_list(skb))
		return ERR_PTR(-EINVAL);
	/* Each frame keeps its own link header: the head's is the same. */
	segs = skb_segment_list(skb, features, skb_mac_header_len(skb));
	if (IS_ERR(segs) || (features & NETIF_F_HW_CSUM))
		return segs;
	/*
	 * This device computes no pcsum (the frames were sealed for one that
	 * does: a bridge's other port, say), and nothing after a GSO cut
	 * does: validate_xmit_skb only checksums what it does not cut.
	 */
	for (seg = segs; seg; seg = seg->next)
		if (seg->ip_summed == CHECKSUM_PARTIAL)
			rtscts_pcsum_fill(seg);
	return segs;
}

static struct rtscts_offload {
	struct packet_offload po;
	unsigned int users;		/* interfaces bound with it (RTNL) */
} rtscts_offloads[] = {
	{ .po = { .type = cpu_to_be16(ETH_P_802_EX1),
		  .callbacks.gso_segment = rtscts_gso_segment } },
	{ .po = { .type = cpu_to_be16(0x88B6),	/* Local Experimental 2 */
		  .callbacks.gso_segment = rtscts_gso_segment } },
};

static struct rtscts_offload *rtscts_offload_of(u16 ethertype)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rtscts_offloads); i++)
		if (rtscts_offloads[i].po.type == htons(ethertype))
			return &rtscts_offloads[i];
	return NULL;
}

/* At bind (RTNL): super-frames if the ethertype may have an offload. */
void rtscts_gso_bind(struct rtscts_if *rif)
{
	struct rtscts_offload *o = rtscts_offload_of(rif->ethertype);

	ASSERT_RTNL();
	if (!o)
		return;
	if (!o->users++)
		dev_add_offload(&o->po);
	rif->superframes = true;
}

/* At unbind (RTNL), after the last frame was sent. */
void rtscts_gso_unbind(struct rtscts_if *rif)
{
	struct rtscts_offload *o = rtscts_offload_of(rif->ethertype);

	ASSERT_RTNL();
	if (!rif->superframes || !o)
		return;
	/* Waits for every segmentation running: none uses it afterwards. */
	if (!--o->users)
		dev_remove_offload(&o->po);
}

/* Can @next travel in the super-frame @head, already @len bytes long? */
static bool rtscts_chainable(const struct sk_buff *head,
			     const struct sk_buff *next, unsigned int len,
			     unsigned int max_len)
{
	/*
	 * A cut gives every frame the head's checksum state
	 * (__copy_skb_header): one pcsum left to the device, or none, for all.
	 */
	return next->len < max_len - len &&
	       next->ip_summed == head->ip_summed &&
	       !memcmp(skb_mac_header(next), skb_mac_header(head), ETH_HLEN);
}

/**
 * rtscts_chain - a super-frame of @head and the frames after it in @q
 * @rif: the interface (it has an offload for its ethertype)
 * @head: a frame ready to send, taken off @q
 * @q: the frames to send after it
 *
 * Takes off @q the frames that follow @head to the same link-layer
 * address, within the device's GSO limits, and chains them to it.
 * Return: the frames that were chained (0: @head goes alone).
 */
unsigned int rtscts_chain(struct rtscts_if *rif, struct sk_buff *head,
			  struct sk_buff_head *q)
{
	struct net_device *dev = rif->dev;
	unsigned int max_len = min_t(unsigned int,
				     READ_ONCE(dev->gso_max_size),
				     GSO_LEGACY_MAX_SIZE);
	unsigned int max_segs = READ_ONCE(dev->gso_max_segs);
	unsigned int len = head->len, frame_max = head->len, segs = 1;
	struct sk_buff *next, *tail = NULL;

	while ((next = skb_peek(q)) && segs < max_segs &&
	       rtscts_chainable(head, next, len, max_len)) {
		__skb_unlink(next, q);
		if (tail)
			tail->next = next;
		else
			skb_shinfo(head)->frag_list = next;
		tail = next;
		len += next->len;
		head->data_len += next->len;
		head->truesize += next->truesize;
		frame_max = max(frame_max, next->len);
		segs++;
	}
	if (segs == 1)
		return 0;
	head->len = len;
	/* A GSO skb's checksum is partial or needs nothing (netif_needs_gso). */
	if (head->ip_summed != CHECKSUM_PARTIAL)
		head->ip_summed = CHECKSUM_UNNECESSARY;
	skb_shinfo(head)->gso_type = SKB_GSO_FRAGLIST;
	/*
	 * After the head's transport header, so that the stack's view of a
	 * segment (skb_gso_mac_seglen) is the longest frame, link header
	 * included.
	 */
	skb_shinfo(head)->gso_size = frame_max - skb_transport_offset(head);
	skb_shinfo(head)->gso_segs = segs;
	return segs - 1;
}

/**
 * rtscts_unchain - take the frames off a super-frame's head
 * @skb: the super-frame, not shared; left holding its first frame
 * @frames: the others, in order, each an Ethernet frame not yet received
 *	(eth_type_trans has not run)
 *
 * Return: 0, or -ENOMEM (@skb is the caller's to drop, with every frame).
 */
int rtscts_unchain(struct sk_buff *skb, struct sk_buff_head *frames)
{
	struct sk_buff *list, *next;

	/* A tap's clone shares the head's shared info: copy it first. */
	if (skb_unclone(skb, GFP_ATOMIC))
		return -ENOMEM;
	list = skb_shinfo(skb)->frag_list;
	skb_shinfo(skb)->frag_list = NULL;
	for (; list; list = next) {
		next = list->next;
		/*
		 * Its truesize stays counted in the head's: nothing charges
		 * a frame by it here (ooo.c keeps copies).
		 */
		skb->len -= list->len;
		skb->data_len -= list->len;
		if (skb_shared(list)) {
			/*
			 * A tap's copy of the super-frame still chains it
			 * (skb_unclone shared the frames): leave its next
			 * alone, take a clone.
			 */
			struct sk_buff *frame = skb_clone(list, GFP_ATOMIC);

			consume_skb(list);
			list = frame;
			if (!list)
				continue;
		} else {
			skb_mark_not_on_list(list);
		}
		__skb_queue_tail(frames, list);
	}
	skb_gso_reset(skb);
	return 0;
}
