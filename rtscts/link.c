// SPDX-License-Identifier: GPL-2.0
/*
 * The device side: binding a Portals interface to an Ethernet device,
 * receiving frames of our ethertype on it, and sending frames.
 *
 * Receive: a packet_type bound to the one device calls rtscts_rcv() in
 * softirq for every frame of the ethertype. Everything that needs no
 * state is checked first (headers, lengths, checksum, addressing); only
 * then is a peer looked up or created, and the frame handed to it under
 * its lock.
 *
 * Send: frames are skbs whose linear part holds the headers (and small
 * payloads, copied); larger payloads are the sender's pinned pages,
 * attached as fragments (ptl_msg_frags): no copy on the sending host. The
 * CRC covers the linear part (csum_len), the Internet checksum pcsum the
 * rest, from its own field on, because a corrupting link (or netem, which
 * linearises a cloned skb before flipping a bit in it) can hit payload
 * bytes too. pcsum is left to the device (CHECKSUM_PARTIAL), which a veth
 * never computes, as for TCP: the stack computes it in software before a
 * device that cannot. Frames are built under the peer lock and sent after
 * it is dropped (rtscts_xmit), a burst as one super-frame (gso.c).
 *
 * Addressing: peers are found by nid. Unless ptlctl gave a static
 * link-layer address, a peer's address is learnt from the frames it sends
 * that pass every check (incarnation.c),
 * or resolved with the kernel's ARP table when our nid is an IPv4 address
 * of the device: nid = IPv4 address (host order) needs no configuration on
 * a flat Ethernet segment (Documentation/wire-protocol.md, "Addressing").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/crc32.h>
#include <net/checksum.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/slab.h>
#include <net/arp.h>
#include <net/neighbour.h>

#include "rtscts.h"
#include "rtscts_trace.h"

/*
 * The transmit unit: the device's MTU as last checked (rtscts_set_mtu),
 * capped by the 16-bit frame_len. Frame room comes from this alone
 * (rtscts_frame_room), never from dev->mtu, which may change under us.
 */
u32 rtscts_mtu(const struct rtscts_if *rif)
{
	return READ_ONCE(rif->mtu);
}

/*
 * CRC32C through the crypto API, which picks the fastest implementation
 * the CPU has (crc32c-intel's SSE4.2 instruction on x86: a few percent of
 * a small message's whole cost with the table-driven __crc32c_le), and
 * loads it on demand, so insmod needs nothing loaded first. Without it the
 * library's table-driven one serves. The shash's state is the running CRC
 * itself, as libcrc32c uses it.
 */
static struct crypto_shash *rtscts_crc_tfm;

int rtscts_crc_init(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32c", 0, 0);

	if (IS_ERR(tfm)) {
		pr_info("no crc32c shash (%ld): table-driven CRC32C\n",
			PTR_ERR(tfm));
		return 0;
	}
	if (crypto_shash_descsize(tfm) != sizeof(u32)) {
		crypto_free_shash(tfm);
		return 0;
	}
	rtscts_crc_tfm = tfm;
	return 0;
}

void rtscts_crc_exit(void)
{
	if (rtscts_crc_tfm)
		crypto_free_shash(rtscts_crc_tfm);
}

/*
 * The descriptor is sized for crc32c's 4-byte state rather than with
 * SHASH_DESC_ON_STACK: Debian's kernel zeroes every stack variable, and
 * zeroing that macro's ~370 bytes per call cost more than the CRC saves.
 */
static u32 rtscts_crc32c_shash(u32 seed, const u8 *p, size_t n)
{
	char buf[sizeof(struct shash_desc) + sizeof(u32)]
		__aligned(__alignof__(struct shash_desc));
	struct shash_desc *desc = (struct shash_desc *)buf;

	desc->tfm = rtscts_crc_tfm;
	*(u32 *)shash_desc_ctx(desc) = seed;
	if (crypto_shash_update(desc, p, n))
		return __crc32c_le(seed, p, n);
	return *(u32 *)shash_desc_ctx(desc);
}

u32 rtscts_crc32c(u32 seed, const u8 *p, size_t n)
{
	if (rtscts_crc_tfm)
		return rtscts_crc32c_shash(seed, p, n);
	return __crc32c_le(seed, p, n);
}

/* pcsum's folded sum over the frame @skb from @start (its field) on. */
static __sum16 rtscts_pcsum(const struct sk_buff *skb, int start)
{
	return csum_fold(skb_checksum(skb, start, skb->len - start, 0));
}

/* ---- sending ---- */

/*
 * An skb whose head holds @size bytes. A small one (every frame's headers,
 * a short message) is built around a piece of the per-CPU page fragment
 * cache, as drivers build received frames: a kmalloc'ed head would be
 * zeroed on every allocation (init_on_alloc, which Debian's kernels turn
 * on) and churn slab pages.
 */
static struct sk_buff *rtscts_alloc_head(size_t size, gfp_t gfp)
{
	unsigned int truesize = SKB_DATA_ALIGN(size) +
				SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	if (truesize > RTSCTS_FRAG_HEAD_MAX || (gfp & __GFP_DIRECT_RECLAIM))
		return alloc_skb(size, gfp);
	data = netdev_alloc_frag(truesize);
	if (!data)
		return NULL;
	skb = build_skb(data, truesize);
	if (!skb)
		skb_free_frag(data);
	return skb;
}

/*
 * An skb with room for the link header and @linear bytes of frame (at
 * most RTSCTS_MAX_FRAME). The device's head and tail room are read once:
 * they may change meanwhile, and the reserve must be what was allocated.
 */
struct sk_buff *rtscts_alloc_skb(struct rtscts_if *rif, size_t linear,
				 gfp_t gfp)
{
	struct net_device *dev = rif->dev;
	size_t head = LL_RESERVED_SPACE(dev);
	size_t size;
	struct sk_buff *skb;

	/* An authenticated frame's tag goes in the tail room (auth.c). */
	if (linear > RTSCTS_MAX_FRAME ||
	    check_add_overflow(head, linear, &size) ||
	    (rif->auth &&
	     check_add_overflow(size, (size_t)RTSCTS_AUTH_TAG_LEN, &size)) ||
	    check_add_overflow(size, (size_t)READ_ONCE(dev->needed_tailroom),
			       &size))
		return NULL;
	skb = rtscts_alloc_head(size, gfp);
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	/* Both at the frame's start: what a super-frame's cut expects. */
	skb_reset_network_header(skb);
	skb_reset_transport_header(skb);
	return skb;
}

/**
 * rtscts_pcsum_fill - compute a frame's pcsum left to the device
 * @skb: one frame, CHECKSUM_PARTIAL, its head writable (the sender's own,
 *	or a segment of a cut: skb_segment_list made each one private)
 *
 * One pass over the bytes from the field on, page fragments read in
 * place: skb_checksum_help() would copy the shared pages of the frame
 * first, and must not be given a cut's first segment, which is shared.
 */
void rtscts_pcsum_fill(struct sk_buff *skb)
{
	int start = skb_checksum_start_offset(skb);
	__sum16 sum = rtscts_pcsum(skb, start);

	*(__sum16 *)(skb->data + start + skb->csum_offset) =
		sum ?: CSUM_MANGLED_0;
	skb->ip_summed = CHECKSUM_NONE;
}

/**
 * rtscts_seal_frame - encode the headers, checksum or tag, link header
 * @rif: the interface
 * @skb: the frame, its headers reserved at the start of the linear part
 * @f: every header field but the checksums and the lengths
 * @mac: the destination's link-layer address
 *
 * Return: 0, or an error from the tag (auth.c): the frame is not sent.
 */
int rtscts_seal_frame(struct rtscts_if *rif, struct sk_buff *skb,
		      struct rtscts_frame *f, const u8 *mac)
{
	int err;

	f->frame_len = skb->len;
	f->csum_len = skb_headlen(skb);
	if (rif->auth) {
		/* The tag covers every byte: no crc, no pcsum. */
		f->flags |= RTSCTS_F_AUTH;
		f->pcsum = 0;
		rtscts_frame_encode(f, skb->data);
		err = rtscts_auth_seal(rif, skb);
		if (err)
			return err;
	} else {
		f->pcsum = 0;
		rtscts_frame_encode(f, skb->data);
		rtscts_frame_set_crc(skb->data,
				     rtscts_frame_crc_unsealed(skb->data,
							       f->csum_len,
							       rtscts_crc32c));
		/*
		 * Payload in pages: pcsum is left to a device that computes
		 * any checksum; a veth never needs to, and the receiver on
		 * this host takes the frame as it is (rtscts_check_csum).
		 * For any other device it is computed here. A large frame
		 * has none: each of its segments gets one if it is cut
		 * (gso.c).
		 */
		if (f->csum_len < f->frame_len && !f->segs) {
			if (!skb_partial_csum_set(skb, RTSCTS_PCSUM_OFF, 0))
				return -EINVAL;
			if (!(READ_ONCE(rif->dev->features) & NETIF_F_HW_CSUM))
				rtscts_pcsum_fill(skb);
		}
	}
	skb->dev = rif->dev;
	skb->protocol = htons(rif->ethertype);
	dev_hard_header(skb, rif->dev, rif->ethertype, mac,
			rif->dev->dev_addr, skb->len);
	skb_reset_mac_header(skb);
	return 0;
}

/**
 * rtscts_finish_frame - fill the common header and seal the frame
 * @peer: the destination (lock held)
 * @skb: the frame: type header and payload in place, headers reserved at
 *	the start of the linear part
 * @f: the frame's type and type fields; the rest is filled here
 *
 * Return: 0, or an error (see rtscts_seal_frame): free @skb.
 */
int rtscts_finish_frame(struct rtscts_peer *peer, struct sk_buff *skb,
			struct rtscts_frame *f)
{
	struct rtscts_if *rif = peer->rif;
	int err;

	f->src_nid = ptl_binding_nid(rif->b);
	f->dst_nid = peer->nid;
	f->src_inc = rif->incarnation;
	f->dst_inc = peer->rx_inc;
	rtscts_fill_ack(peer, f);
	err = rtscts_seal_frame(rif, skb, f, peer->lladdr);
	if (err)
		return err;
	peer->st.tx_frames++;
	peer->st.tx_bytes += skb->len;
	trace_rtscts_tx(rif, peer->nid, f);
	return 0;
}

/* Sends the frames of @q in order, a burst to one peer as a super-frame. */
void __rtscts_xmit(struct rtscts_if *rif, struct sk_buff_head *q)
{
	bool chain = rif->superframes && READ_ONCE(rtscts_superframes);
	u64 frames = 0, bytes = 0, superframes = 0;
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(q))) {
		/* A large frame goes alone: a cut super-frame must be frames. */
		bool large = skb_is_gso(skb);
		unsigned int chained = chain && !large && !skb_queue_empty(q) ?
				       rtscts_chain(rif, skb, q) : 0;

		frames += 1 + chained;
		bytes += skb->len;
		superframes += chained || large;
		dev_queue_xmit(skb);
	}
	if (frames) {
		rtscts_count(rif, PTL_STAT_TX_FRAMES, frames);
		rtscts_count(rif, PTL_STAT_TX_BYTES, bytes);
	}
	if (superframes)
		rtscts_count(rif, PTL_STAT_TX_SUPERFRAMES, superframes);
}

/* ---- address resolution ---- */

/*
 * True once @peer's link-layer address is known. Otherwise asks ARP
 * (when the nid can be an IPv4 address of the segment) and the caller
 * keeps its frames until the timer tries again. Peer lock held.
 */
bool rtscts_resolve(struct rtscts_peer *peer)
{
	struct net_device *dev = peer->rif->dev;
	__be32 ip = htonl(peer->nid);
	struct neighbour *n;

	if (peer->lladdr_valid)
		return true;
	rcu_read_lock();
	n = __ipv4_neigh_lookup_noref(dev, (__force u32)ip);
	if (n && (READ_ONCE(n->nud_state) & NUD_VALID)) {
		neigh_ha_snapshot(peer->lladdr, n, dev);
		peer->lladdr_valid = is_valid_ether_addr(peer->lladdr);
	}
	rcu_read_unlock();
	if (peer->lladdr_valid) {
		rtscts_peer_set_state(peer, PTL_PEER_UP);
		return true;
	}
	/* The timer's retry backs off with each try (timers.c). */
	if (peer->resolve_tries < U8_MAX)
		peer->resolve_tries++;
	rtscts_count(peer->rif, PTL_STAT_RESOLVE_TRIES, 1);
	n = __neigh_lookup(&arp_tbl, &ip, dev, 1);
	if (!IS_ERR_OR_NULL(n)) {
		neigh_event_send(n, NULL);
		neigh_release(n);
	}
	return false;
}

/* ---- receiving ---- */

/*
 * The CRC and pcsum of an unauthenticated frame, trimmed to frame_len.
 * A frame whose pcsum was left to a device (CHECKSUM_PARTIAL) never left
 * this host: it came across a veth, as TCP segments do that the kernel
 * takes unchecked; so did a large frame (gso.c), which has no pcsum. The
 * checksum catches corruption, not forgery.
 */
static bool rtscts_check_csum(const struct sk_buff *skb,
			      const struct rtscts_frame *f)
{
	if (rtscts_frame_crc(skb->data, f->csum_len, rtscts_crc32c) != f->crc)
		return false;
	if (f->csum_len == f->frame_len || f->segs ||
	    skb->ip_summed == CHECKSUM_PARTIAL)
		return true;
	/* Trimmed to frame_len (and no tag): the range sums to all ones. */
	return !rtscts_pcsum(skb, RTSCTS_PCSUM_OFF);
}

/*
 * Headers, lengths, checksum or tag, addressing; 0 or a reason to drop.
 * Nothing of the frame is believed before its tag is checked: the decoder
 * only reads where the tag is.
 */
static int rtscts_check(struct rtscts_if *rif, struct sk_buff *skb,
			struct rtscts_frame *f)
{
	u32 hdr_len;
	int err;

	if (!pskb_may_pull(skb, RTSCTS_HDR_LEN))
		return RTSCTS_FRAME_ESHORT;
	hdr_len = rtscts_frame_hdr_len(skb->data);
	if (hdr_len && !pskb_may_pull(skb, hdr_len))
		return RTSCTS_FRAME_ESHORT;
	err = rtscts_frame_decode(skb->data, skb_headlen(skb), skb->len, f);
	if (err)
		return err;
	if (!f->tag_len != !rif->auth)
		return RTSCTS_FRAME_EAUTH;
	/*
	 * Ethernet pads short frames: frame_len, and the tag after it, say
	 * where ours ends. The tag stays: a frame held ahead of a gap is
	 * decoded again, whole (rtscts_drain_ooo).
	 */
	if (pskb_trim(skb, f->frame_len + f->tag_len) ||
	    !pskb_may_pull(skb, f->csum_len))
		return RTSCTS_FRAME_ELENGTH;
	if (f->tag_len && !rtscts_auth_verify(rif, skb, f->frame_len))
		return RTSCTS_FRAME_EAUTH;
	if (!f->tag_len && !rtscts_check_csum(skb, f))
		return RTSCTS_FRAME_EFIELD;
	if (f->dst_nid != ptl_binding_nid(rif->b) ||
	    f->src_nid == f->dst_nid)
		return RTSCTS_FRAME_ENID;
	return 0;
}

/*
 * Frames received from one peer in a row: one frame, or a run of a
 * super-frame's. The peer's lock is held across them and its answers go
 * once, after the last: a super-frame is acknowledged as a whole.
 */
struct rtscts_rx_run {
	struct rtscts_if *rif;
	struct rtscts_peer *peer;	/* locked, or NULL */
	bool from_alt;
	struct sk_buff_head xq;
};

static void rtscts_run_init(struct rtscts_rx_run *run, struct rtscts_if *rif)
{
	run->rif = rif;
	run->peer = NULL;
	run->from_alt = false;
	__skb_queue_head_init(&run->xq);
}

static void rtscts_run_end(struct rtscts_rx_run *run)
{
	struct rtscts_peer *peer = run->peer;

	if (!peer)
		return;
	rtscts_rx_done(peer, &run->xq, run->from_alt);
	spin_unlock_bh(&peer->lock);
	run->peer = NULL;
	run->from_alt = false;
	rtscts_xmit(run->rif, &run->xq);
}

/* The peer @nid, locked: the run's, or a new run's. NULL: drop the frame. */
static struct rtscts_peer *rtscts_run_peer(struct rtscts_rx_run *run, u32 nid)
{
	struct rtscts_peer *peer = run->peer;

	if (peer && peer->nid == nid && !peer->dead)
		return peer;
	rtscts_run_end(run);
	peer = rtscts_peer_get(run->rif, nid, RTSCTS_OWNER_NONE, GFP_ATOMIC);
	if (!peer) {
		rtscts_count(run->rif, PTL_STAT_NO_BUFFER, 1);
		return NULL;
	}
	spin_lock_bh(&peer->lock);
	if (peer->dead) {
		spin_unlock_bh(&peer->lock);
		return NULL;
	}
	run->peer = peer;
	return peer;
}

/* A frame, its link header pulled, the skb ours (not shared). */
static void rtscts_rcv_frame(struct rtscts_rx_run *run, struct sk_buff *skb)
{
	struct rtscts_if *rif = run->rif;
	struct rtscts_peer *peer;
	struct rtscts_frame f;
	int err;

	if (skb->pkt_type == PACKET_OTHERHOST ||
	    skb->pkt_type == PACKET_LOOPBACK)
		goto drop;
	err = rtscts_check(rif, skb, &f);
	if (err) {
		rtscts_count(rif, err == RTSCTS_FRAME_EAUTH ?
			     PTL_STAT_AUTH_FAILED : PTL_STAT_BAD_FRAMES, 1);
		trace_rtscts_bad(rif, err);
		goto drop;
	}
	/* A frame for an earlier life of this node: tell its sender. */
	if (f.dst_inc && f.dst_inc != rif->incarnation) {
		rtscts_count(rif, PTL_STAT_STALE_FRAMES, 1);
		rtscts_run_end(run);
		if (rtscts_type_reliable(f.type))
			rtscts_send_reset(rif, &f, eth_hdr(skb)->h_source,
					  &rif->last_reset, &run->xq);
		rtscts_xmit(rif, &run->xq);
		goto drop;
	}
	/* Asked who we are (incarnation.c): answered, no state kept. */
	if (f.type == RTSCTS_CHALLENGE) {
		rtscts_run_end(run);
		rtscts_answer_challenge(rif, &f, eth_hdr(skb)->h_source,
					&run->xq);
		rtscts_xmit(rif, &run->xq);
		consume_skb(skb);
		return;
	}
	peer = rtscts_run_peer(run, f.src_nid);
	if (!peer)
		goto drop;
	/* Its address is learnt there, once the frame passed every check. */
	if (rtscts_rx_frame(peer, skb, &f, &run->xq))	/* takes the skb */
		run->from_alt = true;
	return;

drop:
	kfree_skb(skb);
}

/*
 * A super-frame (gso.c): its first frame, then each other one as if it had
 * come alone. Every check is per frame: the chain proves nothing.
 */
static int rtscts_rcv_superframe(struct rtscts_if *rif, struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;
	struct sk_buff_head frames;
	struct rtscts_rx_run run;

	__skb_queue_head_init(&frames);
	if (rtscts_unchain(skb, &frames)) {
		rtscts_count(rif, PTL_STAT_NO_BUFFER, 1);
		kfree_skb(skb);
		return NET_RX_DROP;
	}
	rtscts_count(rif, PTL_STAT_RX_SUPERFRAMES, 1);
	rtscts_run_init(&run, rif);
	rtscts_rcv_frame(&run, skb);
	while ((skb = __skb_dequeue(&frames))) {
		skb->dev = dev;
		if (!pskb_may_pull(skb, ETH_HLEN)) {
			rtscts_count(rif, PTL_STAT_BAD_FRAMES, 1);
			kfree_skb(skb);
			continue;
		}
		skb->protocol = eth_type_trans(skb, dev);
		if (skb->protocol != htons(rif->ethertype)) {
			rtscts_count(rif, PTL_STAT_BAD_FRAMES, 1);
			kfree_skb(skb);
			continue;
		}
		skb_reset_network_header(skb);
		rtscts_rcv_frame(&run, skb);
	}
	rtscts_run_end(&run);
	return NET_RX_SUCCESS;
}

static int rtscts_rcv(struct sk_buff *skb, struct net_device *dev,
		      struct packet_type *pt, struct net_device *orig_dev)
{
	struct rtscts_if *rif = pt->af_packet_priv;
	struct rtscts_rx_run run;

	/* A super-frame's frames share its link header: one look for all. */
	if (skb->pkt_type == PACKET_OTHERHOST ||
	    skb->pkt_type == PACKET_LOOPBACK) {
		kfree_skb(skb);
		return NET_RX_DROP;
	}
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	if (unlikely(rtscts_is_superframe(skb)))
		return rtscts_rcv_superframe(rif, skb);
	rtscts_run_init(&run, rif);
	rtscts_rcv_frame(&run, skb);
	rtscts_run_end(&run);
	return NET_RX_SUCCESS;
}

/* ---- binding ---- */

static u32 rtscts_incarnation(void)
{
	static atomic_t last = ATOMIC_INIT(0);
	u32 now = (u32)(ktime_get_real_ns() >> 20);	/* ~1 ms */
	u32 old, next;

	/* Strictly increasing on this host, and after a reboot too. */
	do {
		old = atomic_read(&last);
		next = rtscts_seq_after(now, old) ? now : old + 1;
		if (!next)
			next = 1;
	} while (atomic_cmpxchg(&last, old, next) != old);
	return next;
}

/* A MSG frame with a byte of payload (and its tag if @auth) must fit. */
static int rtscts_check_mtu(unsigned int mtu, bool auth,
			    struct netlink_ext_ack *extack)
{
	if (mtu < RTSCTS_MIN_MTU) {
		NL_SET_ERR_MSG(extack,
			       "the device's MTU is below 161, the headers of a frame and a byte");
		return -EINVAL;
	}
	if (auth && mtu < RTSCTS_MIN_MTU_AUTH) {
		NL_SET_ERR_MSG(extack,
			       "the device's MTU is below 177, the headers of an authenticated frame, its tag and a byte");
		return -EINVAL;
	}
	return 0;
}

static int rtscts_check_dev(struct net_device *dev, bool auth,
			    struct netlink_ext_ack *extack)
{
	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN) {
		NL_SET_ERR_MSG(extack, "rtscts needs an Ethernet device");
		return -EINVAL;
	}
	return rtscts_check_mtu(READ_ONCE(dev->mtu), auth, extack);
}

/* Takes the device's MTU if frames fit in it; RTNL (or not yet bound). */
static int rtscts_set_mtu(struct rtscts_if *rif, struct netlink_ext_ack *extack)
{
	unsigned int mtu = READ_ONCE(rif->dev->mtu);
	int err = rtscts_check_mtu(mtu, rif->auth, extack);

	if (!err)
		WRITE_ONCE(rif->mtu, min_t(u32, mtu, RTSCTS_MAX_FRAME));
	return err;
}

/*
 * NETDEV_CHANGEMTU: an MTU too small for a MSG frame is refused (the old
 * one comes back) and, should the refusal be ignored, not taken: frames
 * stay within the last MTU that was checked.
 */
int rtscts_dev_changed(struct ptl_binding *b, unsigned long event,
		       struct netlink_ext_ack *extack)
{
	if (event != NETDEV_CHANGEMTU)
		return 0;
	return rtscts_set_mtu(ptl_binding_priv(b), extack);
}

static int rtscts_check_cfg(const struct ptl_bind_config *cfg,
			    struct netlink_ext_ack *extack)
{
	if (cfg->eager_max > RTSCTS_MAX_EAGER) {
		NL_SET_ERR_MSG(extack, "eager is at most 1048576 bytes (1M)");
		return -EINVAL;
	}
	return 0;
}

static void rtscts_apply(struct rtscts_if *rif,
			 const struct ptl_bind_config *cfg)
{
	if (cfg->eager_max)
		WRITE_ONCE(rif->eager_max, cfg->eager_max);
}

int rtscts_bind(struct ptl_binding *b, struct net_device *dev,
		const struct ptl_bind_config *cfg,
		struct netlink_ext_ack *extack)
{
	struct rtscts_if *rif;
	int err;

	err = rtscts_check_dev(dev, cfg->auth_key, extack);
	if (!err)
		err = rtscts_check_cfg(cfg, extack);
	if (err)
		return err;
	rif = kzalloc(sizeof(*rif), GFP_KERNEL);
	if (!rif)
		return -ENOMEM;
	err = rtscts_auth_bind(rif, cfg->auth_key, cfg->auth_key_len, extack);
	if (err) {
		kfree(rif);
		return err;
	}
	rif->b = b;
	rif->dev = dev;
	rtscts_set_mtu(rif, NULL);	/* checked above, under RTNL */
	rif->ethertype = cfg->ethertype ? cfg->ethertype :
					  PTL_ETHERTYPE_DEFAULT;
	rif->eager_max = min(READ_ONCE(rtscts_eager_max), RTSCTS_MAX_EAGER);
	rtscts_apply(rif, cfg);
	rif->incarnation = rtscts_incarnation();
	atomic_set(&rif->next_stream, 1);
	err = rtscts_peers_bind(rif);
	if (err) {
		rtscts_auth_unbind(rif);
		kfree(rif);
		return err;
	}
	rtscts_remember_bind(rif);
	INIT_DELAYED_WORK(&rif->reclaim, rtscts_reclaim_work);
	rtscts_ooo_bind(rif);
	rtscts_gso_bind(rif);
	ptl_binding_set_priv(b, rif);

	rif->pt.type = htons(rif->ethertype);
	rif->pt.dev = dev;
	rif->pt.func = rtscts_rcv;
	rif->pt.af_packet_priv = rif;
	dev_add_pack(&rif->pt);
	schedule_delayed_work(&rif->reclaim, RTSCTS_RECLAIM_PERIOD);
	return 0;
}

int rtscts_configure(struct ptl_binding *b, const struct ptl_bind_config *cfg,
		     struct netlink_ext_ack *extack)
{
	struct rtscts_if *rif = ptl_binding_priv(b);
	int err = rtscts_check_cfg(cfg, extack);

	if (err)
		return err;
	if (cfg->ethertype && cfg->ethertype != rif->ethertype) {
		NL_SET_ERR_MSG(extack,
			       "the ethertype is set when binding: unbind first");
		return -EBUSY;
	}
	rtscts_apply(rif, cfg);
	return 0;
}

/* Process context, RTNL: no frame arrives once dev_remove_pack returns. */
void rtscts_unbind(struct ptl_binding *b)
{
	struct rtscts_if *rif = ptl_binding_priv(b);

	WRITE_ONCE(rif->dying, true);
	dev_remove_pack(&rif->pt);
	cancel_delayed_work_sync(&rif->reclaim);
	cancel_work_sync(&rif->evict_work);
	rtscts_peers_destroy(rif);
	rtscts_gso_unbind(rif);
	rtscts_remember_unbind(rif);
	rtscts_ooo_unbind(rif);
	rtscts_auth_unbind(rif);
	kfree(rif);
}
