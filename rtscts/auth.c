// SPDX-License-Identifier: GPL-2.0
/*
 * Authenticated frames: an interface bound with a key (ptlctl iface bind
 * ... key FILE) seals every frame it sends with a tag and drops every
 * frame it receives whose tag is missing or wrong; one bound without a
 * key drops frames that carry a tag (Documentation/wire-protocol.md,
 * "Authenticated frames"; Documentation/security.md says what this
 * protects against and what not).
 *
 * The tag is HMAC-SHA256 truncated to 128 bits (as IPsec's
 * HMAC-SHA-256-128, RFC 4868) over the whole frame, headers and payload:
 * a deterministic MAC, so there is no nonce that a reboot with the clock
 * behind, a cloned guest or a wrapped counter could reuse (with GMAC or
 * Poly1305 a reused nonce under one key gives forgeries away). The kernel's
 * crypto API picks the fastest SHA-256 the CPU has (SHA-NI, AVX2, SSSE3).
 * Replay: the tagged headers carry the sender's incarnation, stream and
 * sequence, so a recorded frame replayed is stale or a duplicate to the
 * reliability layer; remember.c keeps it so after the receiver frees the
 * peer's state or is bound again.
 *
 * The key lives only inside the crypto transform (its HMAC pads), which
 * the crypto API frees with kfree_sensitive(); it is never kept here nor
 * sent back through netlink.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <crypto/sha2.h>
#include <linux/skbuff.h>

#include "rtscts.h"

#define RTSCTS_AUTH_ALG		"hmac(sha256)"

int rtscts_auth_bind(struct rtscts_if *rif, const u8 *key, u32 key_len,
		     struct netlink_ext_ack *extack)
{
	struct crypto_shash *tfm;
	int err;

	if (!key)
		return 0;
	if (key_len != PTL_AUTH_KEY_LEN) {
		NL_SET_ERR_MSG(extack, "the key must be 32 bytes");
		return -EINVAL;
	}
	tfm = crypto_alloc_shash(RTSCTS_AUTH_ALG, 0, 0);
	if (IS_ERR(tfm)) {
		NL_SET_ERR_MSG(extack, "the kernel has no hmac(sha256)");
		return PTR_ERR(tfm);
	}
	err = crypto_shash_setkey(tfm, key, key_len);
	if (err) {
		crypto_free_shash(tfm);
		return err;
	}
	rif->auth = tfm;
	return 0;
}

void rtscts_auth_unbind(struct rtscts_if *rif)
{
	/* crypto_destroy_tfm() frees the keyed state with kfree_sensitive. */
	if (rif->auth)
		crypto_free_shash(rif->auth);
	rif->auth = NULL;
}

const char *rtscts_auth_name(const struct rtscts_if *rif)
{
	return rif->auth ? RTSCTS_AUTH_ALG : NULL;
}

/* The tag of bytes [0, @len) of @skb, linear or not. */
static int rtscts_auth_tag(struct rtscts_if *rif, struct sk_buff *skb,
			   unsigned int len, u8 *tag)
{
	u8 digest[SHA256_DIGEST_SIZE];
	SHASH_DESC_ON_STACK(desc, rif->auth);
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *p;
	int err;

	desc->tfm = rif->auth;
	err = crypto_shash_init(desc);
	skb_prepare_seq_read(skb, 0, len, &st);
	/*
	 * skb_seq_read() returns whole blocks: the last may reach past @len
	 * (into the tag, on receive). Only @len bytes are hashed.
	 */
	while (!err && done < len && (n = skb_seq_read(done, &p, &st)) != 0) {
		n = min(n, len - done);
		err = crypto_shash_update(desc, p, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	if (!err && done != len)
		err = -EINVAL;
	if (!err)
		err = crypto_shash_final(desc, digest);
	shash_desc_zero(desc);
	memcpy(tag, digest, RTSCTS_AUTH_TAG_LEN);
	memzero_explicit(digest, sizeof(digest));
	return err;
}

/*
 * Appends the tag of the frame @skb (headers encoded, crc and pcsum 0).
 * The tag goes where the frame ends: into the linear part's tail room
 * (rtscts_alloc_skb reserves it), or into a page fragment of its own
 * after the payload's. -EMSGSIZE when no fragment slot is left: the
 * caller builds the frame again with its payload copied.
 */
int rtscts_auth_seal(struct rtscts_if *rif, struct sk_buff *skb)
{
	u8 tag[RTSCTS_AUTH_TAG_LEN];
	struct page *page;
	void *frag;
	int err;

	if (skb_is_nonlinear(skb) &&
	    (skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS ||
	     skb_has_frag_list(skb)))
		return -EMSGSIZE;
	err = rtscts_auth_tag(rif, skb, skb->len, tag);
	if (err)
		return err;
	if (!skb_is_nonlinear(skb)) {
		if (skb_tailroom(skb) < RTSCTS_AUTH_TAG_LEN)
			return -EMSGSIZE;
		skb_put_data(skb, tag, RTSCTS_AUTH_TAG_LEN);
		return 0;
	}
	frag = netdev_alloc_frag(RTSCTS_AUTH_TAG_LEN);
	if (!frag)
		return -ENOMEM;
	memcpy(frag, tag, RTSCTS_AUTH_TAG_LEN);
	page = virt_to_head_page(frag);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page,
			(u8 *)frag - (u8 *)page_address(page),
			RTSCTS_AUTH_TAG_LEN, RTSCTS_AUTH_TAG_LEN);
	return 0;
}

/*
 * True if the tag at [@frame_len, @frame_len + RTSCTS_AUTH_TAG_LEN) of
 * @skb (the decoder checked that it is there) is that of the bytes
 * before it, compared in constant time.
 */
bool rtscts_auth_verify(struct rtscts_if *rif, struct sk_buff *skb,
			u16 frame_len)
{
	u8 want[RTSCTS_AUTH_TAG_LEN], got[RTSCTS_AUTH_TAG_LEN];

	if (skb_copy_bits(skb, frame_len, got, sizeof(got)) ||
	    rtscts_auth_tag(rif, skb, frame_len, want))
		return false;
	return !crypto_memneq(want, got, sizeof(want));
}
