/*
 * Definitions shared by the public p11glue headers.
 */
#ifndef P11GLUE_DEFS_H
#define P11GLUE_DEFS_H

/* Marks the functions libp11glue exports. */
#ifndef P11GLUE_PUBLIC
#if defined(__GNUC__)
#define P11GLUE_PUBLIC __attribute__((visibility("default")))
#else
#define P11GLUE_PUBLIC
#endif
#endif

#endif /* P11GLUE_DEFS_H */
