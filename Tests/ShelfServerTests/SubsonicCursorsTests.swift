import ShelfCore
import Testing

@testable import ShelfServer

/// The positions remembered for album lists made from track lists hold every album seen before
/// them, so their memory grows with the depth: one budget bounds them all, and a client paging
/// forward keeps the position it needs next.
@Suite struct SubsonicCursorsTests {
    func position(_ offset: Int, seen: Int) -> SubsonicCursors.Position {
        .init(
            offset: offset, cursor: PageCursor(key: [.number(Double(offset))], id: TrackID(Int64(offset))),
            seen: Set((0..<seen).map { GroupID(rawValue: Int64($0)) }))
    }

    @Test func albumsSeenStayWithinTheirBudgetAndTheNewestPositionStays() {
        let cursors = SubsonicCursors(maxSeen: 1_000)
        cursors.store("g|0|0|false|false", .init(offset: 50, cursor: PageCursor(key: [], id: TrackID(1))))
        for offset in stride(from: 100, through: 5_000, by: 100) {
            cursors.store("a|newest", position(offset, seen: offset))
            // Only the position just stored may take the total past the budget.
            #expect(cursors.seenCount <= max(1_000, offset), "at \(offset): \(cursors.seenCount)")
            #expect(cursors.nearest("a|newest", atMost: offset)?.offset == offset)
        }
        #expect(cursors.seenCount == 5_000)
        #expect(cursors.nearest("a|newest", atMost: 4_900) == nil, "every other position holding albums was let go")
        // A list whose positions hold no albums is not touched by the budget.
        #expect(cursors.nearest("g|0|0|false|false", atMost: 60)?.offset == 50)

        // Shallow positions fit together again.
        let shallow = SubsonicCursors(maxSeen: 1_000)
        for offset in stride(from: 100, through: 400, by: 100) { shallow.store("a|newest", position(offset, seen: offset)) }
        #expect(shallow.seenCount == 1_000)
        #expect(shallow.nearest("a|newest", atMost: 150)?.offset == 100)
    }
}
