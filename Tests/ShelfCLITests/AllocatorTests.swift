import CMemory
import Foundation
import Testing

/// `shelf` turns glibc's allocator knobs through CMemory. A build where they compile to nothing
/// (the first one did: its glibc test came before any header defined `__GLIBC__`) answers 0 here.
@Suite struct AllocatorTests {
    @Test func theAllocatorKnobsReachGlibc() {
        let size = 1 << 16
        let block = malloc(size)
        defer { free(block) }
        #expect(shelf_memory_in_use() >= size)
        // What `shelf` sets at start: one arena per core, at least two.
        #expect(shelf_memory_limit_arenas(Int32(max(2, ProcessInfo.processInfo.activeProcessorCount))) == 1)
    }
}
