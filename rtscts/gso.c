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
 * Large frames go further, as TCP's GSO packets do: one DATA or MSG
 * frame with up to 64 KiB of payload and one header (wire version 5: segs
 * and seg_size, rtscts_frame.h) stands for the frames of the link's MTU
 * that would carry it (a large MSG: a MSG, then DATA frames). It is a GSO
 * skb too (the same type, no frag_list), so
 * it crosses a veth or a bridge of veths whole and the receiver takes it
 * whole: one header built, checked and acknowledged per 64 KiB instead of
 * per 1.4. Where a device cannot carry it, the packet_offload cuts it
 * (rtscts_cut_large_frame): skb_segment() copies the headers in front of
 * each segment's slice of the payload pages, and each header is rewritten
 * as that segment's own (sequence, offset, lengths, flags, crc, pcsum;
 * past a MSG's first segment, DATA's shorter headers).
 *
 * A large frame has no pcsum (0) and says CHECKSUM_UNNECESSARY: there is
 * nothing for a device that takes it whole to compute. Its segments get
 * theirs when it is cut: left to the device if it computes any checksum,
 * else computed here. A device that computes none never takes it whole:
 * for an skb that is not CHECKSUM_NONE, harmonize_features() masks every
 * GSO feature of a device that cannot checksum the protocol, so the stack
 * cuts it first (a veth after ethtool -K tx off). A large frame never
 * crosses a wire, and its receiver does not check the pcsum it does not
 * have, as it does not check that of a frame that still says
 * CHECKSUM_PARTIAL (link.c).
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

/**
 * rtscts_large_frame_segs - how many frames a large frame may stand for
 * @rif: the interface
 * @type: RTSCTS_MSG or RTSCTS_DATA
 * @room: payload bytes of one frame on its link
 *
 * Return: at most this many (a large frame's header, at most 64 KiB with
 * its link header, within the device's GSO limits), or 0 if this interface
 * sends no large frames.
 */
u32 rtscts_large_frame_segs(const struct rtscts_if *rif, u8 type, u32 room)
{
	struct net_device *dev = rif->dev;
	u32 len = min_t(u32, READ_ONCE(dev->gso_max_size),
			GSO_LEGACY_MAX_SIZE);
	u32 segs;

	if (!rif->superframes || rif->auth || !room ||
	    !READ_ONCE(rtscts_large_frames) ||
	    check_sub_overflow(len, (u32)LL_RESERVED_SPACE(dev), &len) ||
	    check_sub_overflow(min_t(u32, len, RTSCTS_MAX_FRAME),
			       (u32)rtscts_hdr_len(type), &len))
		return 0;
	segs = min3(len / room, (u32)RTSCTS_MAX_SEGS,
		    (u32)READ_ONCE(dev->gso_max_segs));
	return segs >= 2 ? segs : 0;
}

/**
 * rtscts_large_frame_mark - make a built large frame a GSO skb
 * @skb: the sealed frame, its link header pushed
 * @f: its headers
 *
 * As for a TCP GSO packet: gso_size is a segment's payload and the
 * transport header is where the payload starts, so that the stack's view
 * of a segment (skb_gso_mac_seglen) and of the bytes on the wire
 * (qdisc_pkt_len_init) are those of the frames it stands for, and the cut
 * is skb_segment()'s own arithmetic.
 */
void rtscts_large_frame_mark(struct sk_buff *skb, const struct rtscts_frame *f)
{
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb_set_transport_header(skb, skb_network_offset(skb) + f->hdr_len);
	skb_shinfo(skb)->gso_type = SKB_GSO_FRAGLIST;
	skb_shinfo(skb)->gso_size = f->seg_size;
	skb_shinfo(skb)->gso_segs = f->segs;
}

/*
 * A segment past the first of a large MSG is a DATA frame, whose headers
 * are @shrink bytes shorter than the MSG's that skb_segment() copied in
 * front of it: the link header moves up to meet the DATA headers, which
 * end where the copied ones did. Return: where the frame's headers start.
 */
static u8 *rtscts_shrink_segment(struct sk_buff *seg, u32 shrink)
{
	u32 mac_len = skb_mac_header_len(seg);
	u8 *mac = skb_mac_header(seg);

	memmove(mac + shrink, mac, mac_len);
	__skb_pull(seg, shrink);
	skb_reset_mac_header(seg);
	skb_set_network_header(seg, mac_len);
	skb_set_transport_header(seg, mac_len + RTSCTS_DATA_HDR_LEN);
	return skb_network_header(seg);
}

/*
 * Segment @i of the large frame @lf becomes a frame of its own: its
 * header rewritten, crc sealed, pcsum left to a device that computes
 * any checksum (@csum) or computed here.
 */
static void rtscts_seal_segment(struct sk_buff *seg,
				const struct rtscts_frame *lf, u32 i,
				bool csum)
{
	u8 *hdr = skb_mac_header(seg) + skb_mac_header_len(seg);
	struct rtscts_frame f;

	rtscts_frame_segment(lf, i, &f);
	if (f.hdr_len < lf->hdr_len)
		hdr = rtscts_shrink_segment(seg, lf->hdr_len - f.hdr_len);
	rtscts_frame_encode(&f, hdr);
	rtscts_frame_set_crc(hdr, rtscts_frame_crc_unsealed(hdr, f.csum_len,
							    rtscts_crc32c));
	seg->csum_start = hdr - seg->head + RTSCTS_PCSUM_OFF;
	seg->csum_offset = 0;
	seg->ip_summed = CHECKSUM_PARTIAL;
	if (!csum)
		rtscts_pcsum_fill(seg);
}

/*
 * A large frame cut into the frames it stands for. skb_segment() is told
 * the device computes checksums, so that it neither sums the payload nor
 * linearizes the shared pages: each segment's pcsum is seen to here.
 */
static struct sk_buff *rtscts_cut_large_frame(struct sk_buff *skb,
					      netdev_features_t features)
{
	struct sk_buff *segs, *seg;
	struct rtscts_frame lf;
	u32 i = 0;

	/* Built by this host: checked all the same, it is cut by its header. */
	if (rtscts_frame_decode(skb->data, skb_headlen(skb), skb->len, &lf) ||
	    !lf.segs || skb->len != lf.frame_len ||
	    skb_shinfo(skb)->gso_size != lf.seg_size)
		return ERR_PTR(-EINVAL);
	__skb_pull(skb, lf.hdr_len);
	segs = skb_segment(skb, features | NETIF_F_HW_CSUM);
	if (IS_ERR(segs))
		return segs;
	for (seg = segs; seg; seg = seg->next)
		rtscts_seal_segment(seg, &lf, i++,
				    features & NETIF_F_HW_CSUM);
	return segs;
}

static struct sk_buff *rtscts_gso_segment(struct sk_buff *skb,
					  netdev_features_t features)
{
	struct sk_buff *segs, *seg;

	/* Ours are fraglists of whole frames, or large frames. */
	if (!(skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST))
		return ERR_PTR(-EINVAL);
	if (!skb_has_frag_list(skb))
		return rtscts_cut_large_frame(skb, features);
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
	return next->len < max_len - len && !skb_is_gso(next) &&
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
