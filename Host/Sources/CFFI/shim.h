#include <ffi.h>

/* libffi's type descriptors are mutable globals; Swift 6 refuses to touch those from
 * concurrent code, so each is reached through a function returning its address. */
static inline ffi_type *termhost_ffi_void(void) { return &ffi_type_void; }
static inline ffi_type *termhost_ffi_uint8(void) { return &ffi_type_uint8; }
static inline ffi_type *termhost_ffi_sint32(void) { return &ffi_type_sint32; }
static inline ffi_type *termhost_ffi_uint32(void) { return &ffi_type_uint32; }
static inline ffi_type *termhost_ffi_sint64(void) { return &ffi_type_sint64; }
static inline ffi_type *termhost_ffi_uint64(void) { return &ffi_type_uint64; }
static inline ffi_type *termhost_ffi_double(void) { return &ffi_type_double; }
static inline ffi_type *termhost_ffi_pointer(void) { return &ffi_type_pointer; }
/* size_t for the length of a byte buffer. */
static inline ffi_type *termhost_ffi_size(void) { return sizeof(size_t) == 8 ? &ffi_type_uint64 : &ffi_type_uint32; }
