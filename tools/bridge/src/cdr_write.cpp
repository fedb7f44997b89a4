// A serialized sample Cyclone can take from us: a ddsi_serdata whose bytes
// are a buffer of ours (ddsi_serdata.h's interface, as rmw_cyclonedds and
// other CDR forwarders implement it). Only what dds_writecdr's conversion
// uses does anything: size, to_ser, to_ser_ref/unref; the sertype is never
// registered with a domain, so Cyclone calls none of its operations.
#include "cdr_write.hpp"

#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>

#include <cstring>
#include <limits>

#include "ferry/config/cdr.hpp"

namespace ferry::bridge {

// Outside the anonymous namespace: CdrWriter::Impl holds one.
struct LentSerdata {
  ddsi_serdata c;  // first: Cyclone sees a ddsi_serdata*
  const std::byte* bytes = nullptr;
  std::uint32_t size = 0;
};

namespace {

const LentSerdata& lent(const ddsi_serdata* d) { return *reinterpret_cast<const LentSerdata*>(d); }

std::uint32_t lent_size(const ddsi_serdata* d) { return lent(d).size; }
void lent_free(ddsi_serdata*) {}  // owned by the CdrWriter, reused for every sample
void lent_to_ser(const ddsi_serdata* d, std::size_t off, std::size_t sz, void* buf) {
  std::memcpy(buf, lent(d).bytes + off, sz);
}
ddsi_serdata* lent_to_ser_ref(const ddsi_serdata* d, std::size_t off, std::size_t sz,
                              ddsrt_iovec_t* ref) {
  ref->iov_base = const_cast<std::byte*>(lent(d).bytes + off);
  ref->iov_len = static_cast<decltype(ref->iov_len)>(sz);
  return ddsi_serdata_ref(d);
}
void lent_to_ser_unref(ddsi_serdata* d, const ddsrt_iovec_t*) { ddsi_serdata_unref(d); }
// The rest is never called for a serdata that is only written (see above);
// each refuses rather than pretends.
bool lent_eqkey(const ddsi_serdata*, const ddsi_serdata*) { return true; }
ddsi_serdata* lent_from_ser(const ddsi_sertype*, ddsi_serdata_kind, const nn_rdata*, std::size_t) {
  return nullptr;
}
ddsi_serdata* lent_from_ser_iov(const ddsi_sertype*, ddsi_serdata_kind, ddsrt_msg_iovlen_t,
                                const ddsrt_iovec_t*, std::size_t) {
  return nullptr;
}
ddsi_serdata* lent_from_keyhash(const ddsi_sertype*, const ddsi_keyhash*) { return nullptr; }
ddsi_serdata* lent_from_sample(const ddsi_sertype*, ddsi_serdata_kind, const void*) {
  return nullptr;
}
bool lent_to_sample(const ddsi_serdata*, void*, void**, void*) { return false; }
ddsi_serdata* lent_to_untyped(const ddsi_serdata*) { return nullptr; }
bool lent_untyped_to_sample(const ddsi_sertype*, const ddsi_serdata*, void*, void**, void*) {
  return false;
}
std::size_t lent_print(const ddsi_sertype*, const ddsi_serdata*, char* buf, std::size_t size) {
  if (size > 0) buf[0] = '\0';
  return 0;
}
void lent_get_keyhash(const ddsi_serdata*, ddsi_keyhash* buf, bool) {
  std::memset(buf, 0, sizeof *buf);
}

constexpr ddsi_serdata_ops kLentOps = {
    .eqkey = lent_eqkey,
    .get_size = lent_size,
    .from_ser = lent_from_ser,
    .from_ser_iov = lent_from_ser_iov,
    .from_keyhash = lent_from_keyhash,
    .from_sample = lent_from_sample,
    .to_ser = lent_to_ser,
    .to_ser_ref = lent_to_ser_ref,
    .to_ser_unref = lent_to_ser_unref,
    .to_sample = lent_to_sample,
    .to_untyped = lent_to_untyped,
    .untyped_to_sample = lent_untyped_to_sample,
    .free = lent_free,
    .print = lent_print,
    .get_keyhash = lent_get_keyhash,
#ifdef DDS_HAS_SHM
    .get_sample_size = nullptr,
    .from_iox_buffer = nullptr,
#endif
};

void type_free(ddsi_sertype*) {}
void type_zero_samples(const ddsi_sertype*, void*, std::size_t) {}
void type_realloc_samples(void** ptrs, const ddsi_sertype*, void*, std::size_t, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) ptrs[i] = nullptr;
}
void type_free_samples(const ddsi_sertype*, void**, std::size_t, dds_free_op_t) {}
bool type_equal(const ddsi_sertype* a, const ddsi_sertype* b) { return a == b; }
std::uint32_t type_hash(const ddsi_sertype*) { return 0; }

constexpr ddsi_sertype_ops kTypeOps = {
    .version = ddsi_sertype_v0,
    .arg = nullptr,
    .free = type_free,
    .zero_samples = type_zero_samples,
    .realloc_samples = type_realloc_samples,
    .free_samples = type_free_samples,
    .equal = type_equal,
    .hash = type_hash,
    .type_id = nullptr,
    .type_map = nullptr,
    .type_info = nullptr,
    .derive_sertype = nullptr,
    .get_serialized_size = nullptr,
    .serialize_into = nullptr,
};

}  // namespace

struct CdrWriter::Impl {
  Impl(const config::Schema& s, std::size_t t) : schema(s), type(t) {}
  const config::Schema& schema;
  std::size_t type;
  ddsi_sertype sertype{};
  LentSerdata serdata{};
  std::unique_ptr<std::byte[]> buffer;
  std::size_t capacity = 0;
};

CdrWriter::CdrWriter(const config::Schema& schema, std::size_t type, const char* type_name)
    : impl_(std::make_unique<Impl>(schema, type)) {
  ddsi_sertype_init_flags(&impl_->sertype, type_name, &kTypeOps, &kLentOps,
                          DDSI_SERTYPE_FLAG_TOPICKIND_NO_KEY);
}

CdrWriter::~CdrWriter() { ddsi_sertype_fini(&impl_->sertype); }

dds_return_t CdrWriter::write(dds_entity_t writer, std::span<const std::byte> sample) {
  Impl& m = *impl_;
  const std::uint64_t size = config::cdr_size(m.schema, m.type, sample);
  if (size > std::numeric_limits<std::uint32_t>::max()) return DDS_RETCODE_OUT_OF_RESOURCES;
  if (size > m.capacity) {
    m.buffer = std::make_unique_for_overwrite<std::byte[]>(size);
    m.capacity = size;
  }
  config::cdr_encode(m.schema, m.type, sample, std::span<std::byte>(m.buffer.get(), size));
  // One reference, which dds_writecdr consumes (then lent_free: a no-op).
  ddsi_serdata_init(&m.serdata.c, &m.sertype, SDK_DATA);
  m.serdata.bytes = m.buffer.get();
  m.serdata.size = static_cast<std::uint32_t>(size);
  return dds_writecdr(writer, &m.serdata.c);
}

}  // namespace ferry::bridge
