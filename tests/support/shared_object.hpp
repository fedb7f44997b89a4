#pragma once
// A T in anonymous shared memory, made before a test forks its children
// (test_domain.hpp's Child): the parent and every child see each other's
// writes, so T holds atomics. Destroyed and unmapped with the owner, in the
// parent (a child leaves without running destructors).

#include <doctest/doctest.h>
#include <sys/mman.h>

#include <new>

namespace ferry::test {

template <class T>
class SharedObject {
 public:
  SharedObject() {
    void* at =
        ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(at != MAP_FAILED);
    object_ = new (at) T{};
  }
  ~SharedObject() {
    object_->~T();
    ::munmap(object_, sizeof(T));
  }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  [[nodiscard]] T* get() const noexcept { return object_; }
  T& operator*() const noexcept { return *object_; }
  T* operator->() const noexcept { return object_; }

 private:
  T* object_ = nullptr;
};

}  // namespace ferry::test
