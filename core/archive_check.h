// Integrity of the zip archives LibTorch writes (policy files, checkpoints).
//
// LibTorch 1.13 reads these archives without checking the CRC-32 its writer
// stores for every entry, so a damaged byte inside a weight, the pickled header
// or the optimiser state loads without a word. check_torch_archive reads the
// file's zip structure itself first: the end records (zip64 included), every
// central-directory entry and the local header it points at, each stored entry's
// CRC-32, and that nothing lies after the end record.
//
// Torch-free; pure apart from reading `path`; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace aware {

// The CRC-32 of zip (polynomial 0xEDB88320) of `size` bytes.
std::uint32_t zip_crc32(const void* data, std::size_t size);

// Throws ParseError "<what> <path> is corrupt or not a torch archive: <reason>"
// naming the first inconsistency (a truncated file, a bad offset, an entry whose
// data fails its CRC-32, ...), or "<what> <path> cannot be read" / "is a
// directory". Entries LibTorch stores deflated (its TorchScript code, which it
// compiles and so refuses when damaged) are checked for their place in the file,
// not for their CRC.
void check_torch_archive(const std::string& path, const std::string& what);
// The same check on the file's bytes, already read (messages name `path`).
void check_torch_archive_bytes(const std::string& bytes, const std::string& path,
                               const std::string& what);

}  // namespace aware
