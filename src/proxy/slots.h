/*
 * The proxy's slot IDs, stable for the life of the process.
 *
 * Every module the proxy has ever used in this process (known by its
 * registry name and library file) gets a range of PX_SLOTS_PER_MODULE
 * IDs, in the order modules are first seen, and each of its slots the
 * next ID of that range when first seen. Nothing is ever forgotten: after
 * C_Finalize and C_Initialize, or in a child after fork, the same slot of
 * the same module has the same ID, and an ID never names another slot.
 * Within a process that starts from the same configuration, a module's
 * IDs do not depend on how many slots the modules before it have.
 * Slots past a module's range, and modules past the last range, get IDs
 * from PX_SLOTS_OVERFLOW on.
 *
 * Not locked: the proxy calls these with its lock held.
 */
#ifndef PX_SLOTS_H
#define PX_SLOTS_H

#include "common.h"

#include <p11glue/pkcs11.h>

#define PX_SLOTS_PER_MODULE 256
#define PX_SLOTS_MODULE_RANGES 4096
#define PX_SLOTS_OVERFLOW ((CK_SLOT_ID)PX_SLOTS_PER_MODULE * PX_SLOTS_MODULE_RANGES)

/*
 * The book entry of a module (created on first sight), for the calls
 * below; -1 when memory runs out. path may be NULL.
 */
long px_slots_module(const char *name, const char *path);

/* The proxy ID of the module's slot real, assigned on first sight;
 * false when memory runs out. */
bool px_slots_map(long module, CK_SLOT_ID real, CK_SLOT_ID *id) PG_MUST_CHECK;

/* The module and real slot of a proxy ID; false for an ID never given. */
bool px_slots_lookup(CK_SLOT_ID id, long *module, CK_SLOT_ID *real);

#endif /* PX_SLOTS_H */
