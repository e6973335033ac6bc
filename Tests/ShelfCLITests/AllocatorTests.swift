import CMemory
import Foundation
import Testing

/// `shelf` turns glibc's allocator knobs through CMemory. A build where they compile to nothing
/// (the first one did: its glibc test came before any header defined `__GLIBC__`) answers 0 here.
/// Under AddressSanitizer (`make asan`) its own allocator replaces glibc's, which has no such knobs.
@Suite(.disabled(if: ProcessInfo.processInfo.environment["SHELF_SANITIZER"] != nil, "a sanitizer's allocator replaces glibc's"))
struct AllocatorTests {
    @Test func theAllocatorKnobsReachGlibc() {
        let size = 1 << 16
        let block = malloc(size)
        defer { free(block) }
        #expect(shelf_memory_in_use() >= size)
        // What `shelf` sets at start: one arena per core, at least two.
        #expect(shelf_memory_limit_arenas(Int32(max(2, ProcessInfo.processInfo.activeProcessorCount))) == 1)
    }

    /// What `shelf serve` sets: a block past the threshold has a mapping of its own even after a
    /// larger one was freed (glibc's sliding threshold would have cut the second from an arena).
    @Test func largeBlocksStayMappedOnceTheThresholdIsPinned() {
        #expect(shelf_memory_map_from(128 << 10) == 1)
        free(malloc(8 << 20))
        // Other tests' threads map and unmap blocks too, so one of a few tries must see it.
        let seen = (0..<5).contains { _ in
            let before = shelf_memory_mapped()
            let block = malloc(4 << 20)
            defer { free(block) }
            return shelf_memory_mapped() >= before + (4 << 20)
        }
        #expect(seen)
    }
}
