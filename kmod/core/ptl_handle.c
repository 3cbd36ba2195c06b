// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Handles and the per-NI object tables behind them.
 *
 * A handle is   gen:11 | type:2 | ni slot:3 | index:16   (high to low).
 * Index 0xffff is never given out, so the reserved values
 * PTL_INVALID_HANDLE (0xffffffff), PTL_HANDLE_NONE (0x7fffffff) and
 * PTL_EQ_NONE (0xbfffffff) never name an object whatever their other bits.
 * The type field makes an ME handle given for an MD fail lookup, so callers
 * report the type-specific *_INVALID code.
 *
 * Each slot keeps a full 32-bit generation, bumped on every free, so a
 * stale handle (11 bits of it) or a late ACK/REPLY (all 32 bits, carried
 * on the wire) for a recycled slot fails lookup instead of reaching the new
 * object. Free slots are reused oldest first, which maximises the number
 * of frees between two uses of the same slot. Tables grow in chunks of 256
 * slots so an NI costs little until it is used, and lookup stays O(1).
 */
#include "ptlc_internal.h"

ptl_handle_any_t ptlc_handle_make(u32 type, u32 slot, u32 gen, u32 index)
{
	return ((gen & PTLC_H_GEN_MASK) << PTLC_H_GEN_SHIFT) |
	       ((type & PTLC_H_TYPE_MASK) << PTLC_H_TYPE_SHIFT) |
	       ((slot & PTLC_H_SLOT_MASK) << PTLC_H_SLOT_SHIFT) |
	       (index & 0xffffU);
}

static u32 handle_index(ptl_handle_any_t h)
{
	return h & 0xffffU;
}

static u32 handle_type(ptl_handle_any_t h)
{
	return (h >> PTLC_H_TYPE_SHIFT) & PTLC_H_TYPE_MASK;
}

static u32 handle_gen(ptl_handle_any_t h)
{
	return (h >> PTLC_H_GEN_SHIFT) & PTLC_H_GEN_MASK;
}

int ptlc_handle_slot(ptl_handle_any_t h)
{
	if (handle_index(h) == PTLC_H_INDEX_NONE)
		return -1;
	return (h >> PTLC_H_SLOT_SHIFT) & PTLC_H_SLOT_MASK;
}

/* Generations whose low 11 bits are 0 are skipped: no handle is 0. */
static u32 next_gen(u32 gen)
{
	gen++;
	if ((gen & PTLC_H_GEN_MASK) == 0)
		gen++;
	return gen;
}

void ptlc_htab_init(struct ptlc_htab *tab, enum ptlc_obj_type type,
		    u32 slot, u32 limit, u32 gen_seed)
{
	ptl_memset(tab, 0, sizeof(*tab));
	tab->type = type;
	tab->slot = slot;
	tab->limit = limit;
	tab->free_head = PTLC_NO_SLOT;
	tab->free_tail = PTLC_NO_SLOT;
	tab->gen_seed = (gen_seed & PTLC_H_GEN_MASK) ? gen_seed :
			next_gen(gen_seed);
}

void ptlc_htab_destroy(struct ptlc_ni *ni, struct ptlc_htab *tab)
{
	unsigned int i;

	for (i = 0; i < PTLC_NCHUNKS; i++) {
		ptlc_chunk_free(ni, tab->chunks[i]);
		tab->chunks[i] = NULL;
	}
}

static struct ptlc_slot *slot_at(const struct ptlc_htab *tab, u32 index)
{
	return &tab->chunks[index >> PTLC_CHUNK_SHIFT]
			   [index & (PTLC_CHUNK_SLOTS - 1)];
}

void *ptlc_chunk_alloc(struct ptlc_ni *ni)
{
	return ptlc_alloc(ni, sizeof(struct ptlc_slot) * PTLC_CHUNK_SLOTS);
}

void ptlc_chunk_free(struct ptlc_ni *ni, void *chunk)
{
	ptlc_free(ni, chunk, sizeof(struct ptlc_slot) * PTLC_CHUNK_SLOTS);
}

bool ptlc_htab_needs_chunk(const struct ptlc_htab *tab)
{
	return tab->free_head == PTLC_NO_SLOT && tab->live < tab->limit;
}

static void push_free(struct ptlc_htab *tab, u32 index)
{
	slot_at(tab, index)->next_free = PTLC_NO_SLOT;
	if (tab->free_tail == PTLC_NO_SLOT)
		tab->free_head = index;
	else
		slot_at(tab, tab->free_tail)->next_free = index;
	tab->free_tail = index;
}

static u32 pop_free(struct ptlc_htab *tab)
{
	u32 index = tab->free_head;

	tab->free_head = slot_at(tab, index)->next_free;
	if (tab->free_head == PTLC_NO_SLOT)
		tab->free_tail = PTLC_NO_SLOT;
	return index;
}

/* Puts the slots of a new chunk on the free list, skipping 0xffff. */
static void add_chunk(struct ptlc_htab *tab, struct ptlc_slot *chunk)
{
	u32 base = tab->nslots;
	u32 i;

	tab->chunks[base >> PTLC_CHUNK_SHIFT] = chunk;
	tab->nslots += PTLC_CHUNK_SLOTS;
	for (i = 0; i < PTLC_CHUNK_SLOTS; i++) {
		if (base + i == PTLC_H_INDEX_NONE)
			continue;
		chunk[i].gen = tab->gen_seed;
		push_free(tab, base + i);
	}
}

/*
 * Returns PTL_OK, PTL_NO_SPACE (limit reached) or PTL_FAIL when a chunk is
 * needed and *spare is NULL (the caller allocates one and retries).
 */
int ptlc_htab_insert(struct ptlc_htab *tab, void *obj, void **spare,
		     u32 *index)
{
	struct ptlc_slot *slot;

	if (tab->live >= tab->limit)
		return PTL_NO_SPACE;
	if (tab->free_head == PTLC_NO_SLOT) {
		if (tab->nslots >= PTLC_NCHUNKS * PTLC_CHUNK_SLOTS)
			return PTL_NO_SPACE;
		if (!*spare)
			return PTL_FAIL;
		add_chunk(tab, *spare);
		*spare = NULL;
	}
	*index = pop_free(tab);
	slot = slot_at(tab, *index);
	slot->obj = obj;
	tab->live++;
	tab->allocs++;
	if (tab->live > tab->max_live)
		tab->max_live = tab->live;
	return PTL_OK;
}

void ptlc_htab_remove(struct ptlc_htab *tab, u32 index)
{
	struct ptlc_slot *slot = slot_at(tab, index);

	slot->obj = NULL;
	slot->gen = next_gen(slot->gen);
	tab->live--;
	tab->frees++;
	push_free(tab, index);
}

ptl_handle_any_t ptlc_htab_handle(const struct ptlc_htab *tab, u32 index)
{
	return ptlc_handle_make(tab->type, tab->slot,
				slot_at(tab, index)->gen, index);
}

u32 ptlc_htab_gen(const struct ptlc_htab *tab, u32 index)
{
	return slot_at(tab, index)->gen;
}

void *ptlc_htab_lookup(const struct ptlc_htab *tab, ptl_handle_any_t h)
{
	u32 index = handle_index(h);
	struct ptlc_slot *slot;

	if (handle_type(h) != tab->type || ptlc_handle_slot(h) != (int)tab->slot)
		return NULL;
	if (index >= tab->nslots)
		return NULL;
	slot = slot_at(tab, index);
	if (!slot->obj || (slot->gen & PTLC_H_GEN_MASK) != handle_gen(h))
		return NULL;
	return slot->obj;
}

void *ptlc_htab_lookup_gen(const struct ptlc_htab *tab, u32 index, u32 gen)
{
	struct ptlc_slot *slot;

	if (index >= tab->nslots || index == PTLC_H_INDEX_NONE)
		return NULL;
	slot = slot_at(tab, index);
	if (!slot->obj || slot->gen != gen)
		return NULL;
	return slot->obj;
}

void *ptlc_htab_next(const struct ptlc_htab *tab, u32 *pos)
{
	for (; *pos < tab->nslots; (*pos)++) {
		void *obj = slot_at(tab, *pos)->obj;

		if (obj) {
			(*pos)++;
			return obj;
		}
	}
	return NULL;
}

bool ptlc_ni_handle_valid(const struct ptlc_ni *ni, ptl_handle_ni_t h)
{
	return h == ptlc_ni_handle(ni);
}

int ptlc_ni_handle_of(struct ptlc_ni *ni, ptl_handle_any_t h,
		      ptl_handle_ni_t *out)
{
	bool live;

	if (ptlc_handle_slot(h) != (int)ni->slot)
		return PTL_HANDLE_INVALID;
	ptl_lock(&ni->lock);
	switch (handle_type(h)) {
	case PTLC_OBJ_NI:
		live = ptlc_ni_handle_valid(ni, h);
		break;
	case PTLC_OBJ_ME:
		live = ptlc_htab_lookup(&ni->mes, h) != NULL;
		break;
	case PTLC_OBJ_MD:
		live = ptlc_htab_lookup(&ni->mds, h) != NULL;
		break;
	default:
		live = ptlc_htab_lookup(&ni->eqs, h) != NULL;
		break;
	}
	ptl_unlock(&ni->lock);
	if (!live)
		return PTL_HANDLE_INVALID;
	*out = ptlc_ni_handle(ni);
	return PTL_OK;
}
