import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Synchronization
import Testing

@testable import Shelf

/// What a client can see of a library at one token.
struct LibraryState: Equatable {
    var tracks: [TrackID: Track] = [:]
    var playlists: [PlaylistID: Playlist] = [:]
    var items: [PlaylistID: [TrackID]] = [:]
    var artwork: Set<ArtworkID> = []

    static func read(_ library: Library) async throws -> LibraryState {
        let path = library.storeURL.path
        return try await Task.detached {
            let db = try Connection(path: path, mode: .readOnly)
            var state = LibraryState()
            for track in try db.query(TrackRow.select, [], TrackRow.decode) { state.tracks[track.id] = track }
            for playlist in try db.query(PlaylistRow.select, [], PlaylistRow.decode) { state.playlists[playlist.id] = playlist }
            for id in state.playlists.keys {
                state.items[id] = try db.query("SELECT track_id FROM playlist_item WHERE playlist_id = ? ORDER BY position", [id.rawValue]) {
                    TrackID(try $0.int64(0))
                }
            }
            state.artwork = Set(try db.query("SELECT id FROM artwork", []) { ArtworkID(try $0.get(0, as: UUID.self)) })
            return state
        }.value
    }

    /// Tracks in any of `scope`.
    func inScope(_ scope: Set<PlaylistID>) -> Set<TrackID> {
        Set(scope.flatMap { items[$0] ?? [] })
    }

    /// A client's way of applying what it was told: deleted objects are dropped, inserted and
    /// updated ones are refetched from the library as it is now (`final`).
    mutating func apply(_ change: PersistentChange, final: LibraryState) {
        for key in change.tracks.deleted { if case .track(let id) = key { tracks[id] = nil } }
        for key in change.tracks.inserted + change.tracks.updated.map(\.id) {
            if case .track(let id) = key { tracks[id] = final.tracks[id] }  // nil when gone since: treated as deleted
        }
        for key in change.playlists.deleted {
            if case .playlist(let id) = key {
                playlists[id] = nil
                items[id] = nil
            }
        }
        for key in change.playlists.inserted + change.playlists.updated.map(\.id) {
            if case .playlist(let id) = key {
                playlists[id] = final.playlists[id]
                items[id] = final.items[id]
            }
        }
        for key in change.artwork.deleted { if case .artwork(let id) = key { artwork.remove(id) } }
        for key in change.artwork.inserted + change.artwork.updated.map(\.id) {
            if case .artwork(let id) = key, final.artwork.contains(id) { artwork.insert(id) }
        }
    }
}

/// One random write batch over a small library.
@LibraryActor
func randomBatch(_ batch: WriteBatch, random: inout SeededRandom, serial: inout Int) throws {
    let trackIDs = try batch.db.query("SELECT id FROM track", []) { TrackID(try $0.int64(0)) }
    let playlistIDs = try batch.db.query("SELECT id FROM playlist WHERE kind = 0", []) { PlaylistID(try $0.int64(0)) }
    for _ in 0..<random.int(1...4) {
        switch random.int(0...9) {
        case 0, 1:
            serial += 1
            var track = sampleTrack(serial)
            if random.chance(0.3) { track.artworkID = try batch.addArtwork(Data([UInt8(random.int(0...5)), 1, 2])) }
            try batch.insert(track)
        case 2 where !trackIDs.isEmpty:
            let id = random.pick(trackIDs)
            if try batch.track(id) != nil { try batch.deleteTrack(id) }
        case 3 where !trackIDs.isEmpty, 4 where !trackIDs.isEmpty:
            let id = random.pick(trackIDs)
            guard try batch.track(id) != nil else { break }
            let kind = random.int(0...3)
            try batch.updateTrack(id) { track in
                switch kind {
                case 0: track.playCount += 1
                case 1: track.title = "T\(random.int(0...1_000))"
                case 2: track.path = "/moved/\(id)-\(random.int(0...1_000_000)).flac"
                default: track.artworkID = random.chance(0.5) ? nil : track.artworkID
                }
            }
        case 5:
            try batch.createPlaylist(Playlist(name: "P\(random.int(0...99))"))
        case 6 where !playlistIDs.isEmpty && !trackIDs.isEmpty, 7 where !playlistIDs.isEmpty && !trackIDs.isEmpty:
            let live = try trackIDs.filter { try batch.track($0) != nil }
            guard !live.isEmpty else { break }
            let items = (0..<random.int(0...4)).map { _ in random.pick(live) }
            let playlist = random.pick(playlistIDs)
            guard try batch.playlist(playlist) != nil else { break }  // deleted earlier in this batch
            if random.chance(0.5) {
                try batch.setPlaylistItems(playlist, items)
            } else {
                try batch.appendToPlaylist(playlist, items)
            }
        case 8 where !playlistIDs.isEmpty:
            let id = random.pick(playlistIDs)
            if try batch.playlist(id) != nil {
                if random.chance(0.3) {
                    try batch.deletePlaylist(id)
                } else {
                    var p = try #require(try batch.playlist(id))
                    p.name += "!"
                    try batch.updatePlaylist(p)
                }
            }
        default:
            serial += 1
            try batch.insert(sampleTrack(serial))
        }
    }
}

@Suite struct HistoryTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func clientsReconstructTheFinalStateFromAnyToken(seed: UInt64) async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        var random = SeededRandom(seed: seed)
        var serial = 0
        var tokens: [ChangeToken] = [try await library.currentToken()]
        var states: [LibraryState] = [try await LibraryState.read(library)]
        for step in 0..<120 {
            let seedForBatch = random.next()
            let (nextSerial, _) = try await library.write { batch in
                var r = SeededRandom(seed: seedForBatch)
                var s = serial
                try randomBatch(batch, random: &r, serial: &s)
                return (s, 0)
            }
            serial = nextSerial
            let token = try await library.currentToken()
            if token != tokens.last {
                tokens.append(token)
                states.append(try await LibraryState.read(library))
            }
            if step % 30 == 29 {
                let keep = random.int(0...40)
                let maxSummary: Int? = seed == 3 && step == 89 ? 1 : nil  // one run drops its summary: old tokens expire
                _ = try await library.compactHistory(retention: HistoryRetention(keepDays: nil, keepEntries: keep, maxSummaryObjects: maxSummary))
            }
        }
        let final = try await LibraryState.read(library)
        let db = try Connection(path: library.storeURL.path, mode: .readOnly)
        let bounds = try HistoryBounds.read(db)
        #expect(bounds.compacted > 0)
        if seed == 3 { #expect(bounds.start > 0) }

        for (index, token) in tokens.enumerated() {
            // Per-transaction changes: exact at every step, or .detailsUnavailable / .tokenExpired when due.
            do {
                let feed = try await library.changes(since: token)
                #expect(token.transaction >= bounds.compacted)
                var client = states[index]
                var later = index
                for change in feed.changes {
                    later += 1
                    #expect(change.token == tokens[later])
                    let expected = states[later]
                    let before = states[later - 1]
                    // Inserted and deleted IDs are exact; updated groups are exactly what differs.
                    #expect(Set(change.tracks.inserted) == Set(expected.tracks.keys.filter { before.tracks[$0] == nil }.map(ObjectKey.track)))
                    #expect(Set(change.tracks.deleted) == Set(before.tracks.keys.filter { expected.tracks[$0] == nil }.map(ObjectKey.track)))
                    for (id, old) in before.tracks {
                        guard let new = expected.tracks[id] else { continue }
                        let reported = change.tracks.updated.first { $0.id == .track(id) }?.groups ?? []
                        #expect(reported == new.changedGroups(from: old), "track \(id) at \(change.token)")
                    }
                    #expect(Set(change.artwork.inserted) == Set(expected.artwork.subtracting(before.artwork).map(ObjectKey.artwork)))
                    #expect(Set(change.artwork.deleted) == Set(before.artwork.subtracting(expected.artwork).map(ObjectKey.artwork)))
                    client.apply(change, final: final)
                }
                #expect(later == tokens.count - 1)
                #expect(client == final)
            } catch LibraryError.detailsUnavailable {
                #expect(token.transaction < bounds.compacted && token.transaction >= bounds.start)
            } catch LibraryError.tokenExpired {
                #expect(token.transaction < bounds.start)
            }
            // The net summary: works across compaction, and reconstructs the same final state.
            do {
                let summary = try await library.changeSummary(since: token)
                #expect(token.transaction >= bounds.start)
                #expect(summary.token == tokens.last)
                var client = states[index]
                client.apply(summary, final: final)
                #expect(client == final, "summary from \(token)")
                if token.transaction >= bounds.compacted {
                    // Exact net difference: nothing reported that did not change.
                    let inserted = Set(final.tracks.keys).subtracting(states[index].tracks.keys)
                    #expect(Set(summary.tracks.inserted) == Set(inserted.map(ObjectKey.track)))
                }
            } catch LibraryError.tokenExpired {
                #expect(token.transaction < bounds.start)
            }
        }
    }

    @Test func tokensFromElsewhereAndMalformedTextAreClearErrors() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.write { try $0.insert(sampleTrack(1)) }
        let current = try await library.currentToken()
        #expect(ChangeToken(current.description) == current)
        #expect(String(describing: current).hasPrefix("shelf1."))
        let foreign = ChangeToken(storeID: UUID(), transaction: 0)
        await #expect(throws: LibraryError.self) { try await library.changes(since: foreign) }
        let future = ChangeToken(storeID: current.storeID, transaction: current.transaction + 5)
        do {
            _ = try await library.changeSummary(since: future)
            Issue.record("expected tokenExpired")
        } catch LibraryError.tokenExpired(let token, let reason) {
            #expect(token == future.description)
            #expect(reason.contains("beyond"))
        }
        for text in ["", "garbage", "shelf1.not-a-uuid.3", "shelf1.\(current.storeID).-1", "shelf1.\(current.storeID).x", "shelf2.\(current.storeID).1"] {
            #expect(throws: LibraryError.malformedToken(text)) { try Library.token(text) }
        }
        let decoded = try JSONDecoder().decode([ChangeToken].self, from: JSONEncoder().encode([current]))
        #expect(decoded == [current])
        // A recreated library at the same path is another store: old tokens expire. (The first
        // library's background mirror build must be done before its files are removed.)
        try await library.waitForMirror()
        try FileManager.default.removeItem(at: dir.url)
        let recreated = Library(directory: dir.url)
        try await recreated.write { try $0.insert(sampleTrack(1)) }
        await #expect(throws: LibraryError.self) { try await recreated.changes(since: current) }
    }

    /// What keeps the Subsonic artist index through plays and ratings: only a change of what the
    /// views show counts (a retag, a new track, a picture); another store's token always does.
    @Test func viewsChangeWithTagsAndTracksButNotWithRatingsOrStars() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let id = try await library.write { try $0.insert(sampleTrack(1)) }
        let user = try await library.addUser(name: "owner", password: "pass-word", admin: true)
        let start = try await library.currentToken()
        #expect(try await library.viewsChanged(since: start) == false)
        try await library.write { batch in
            try batch.setRating(id, by: user.id, 60)
            try batch.setStarred([id], by: user.id, true)
        }
        let rated = try await library.currentToken()
        #expect(rated != start)
        #expect(try await library.viewsChanged(since: start) == false)
        var track = try #require(try await library.tracks(ids: [id]).tracks.first)
        track.albumArtist = "Someone Else"
        try await library.write { _ = try $0.update(track) }
        #expect(try await library.viewsChanged(since: start) == true)
        #expect(try await library.viewsChanged(since: rated) == true)
        #expect(try await library.viewsChanged(since: try await library.currentToken()) == false)
        try await library.write { _ = try $0.insert(sampleTrack(2)) }
        #expect(try await library.viewsChanged(since: rated) == true)
        // Once the read mirror has applied a write, a cache of the views is right as of its token.
        try await library.waitForMirror()
        #expect(try await library.viewsHold(try await library.currentToken()))
        #expect(try await library.viewsChanged(since: ChangeToken(storeID: UUID(), transaction: rated.transaction)) == true)
        try await library.waitForMirror()
    }

    @Test func scopesSeeTracksEnterAndLeaveTheirPlaylists() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let (ids, mine, other) = try await library.write { batch in
            let ids = try (1...5).map { try batch.insert(sampleTrack($0)) }
            let mine = try batch.createPlaylist(Playlist(name: "Mine"))
            let other = try batch.createPlaylist(Playlist(name: "Other"))
            try batch.setPlaylistItems(mine, [ids[0], ids[1]])
            try batch.setPlaylistItems(other, [ids[2]])
            return (ids, mine, other)
        }
        let start = try await library.currentToken()
        try await library.write { batch in try batch.updateTrack(ids[0]) { $0.playCount = 9 } }  // in scope: updated
        try await library.write { batch in try batch.updateTrack(ids[2]) { $0.title = "x" } }  // other playlist only
        try await library.write { batch in try batch.appendToPlaylist(mine, [ids[3], ids[0]]) }  // 3 enters; 0 twice
        try await library.write { batch in try batch.setPlaylistItems(mine, [ids[0], ids[3]]) }  // 1 leaves
        try await library.write { batch in try batch.deleteTrack(ids[3]) }  // deleted in scope
        try await library.write { batch in try batch.insert(sampleTrack(50)) }  // unrelated
        let feed = try await library.changes(since: start, scope: [mine])
        #expect(feed.token == (try await library.currentToken()))
        #expect(feed.changes.count == 4)
        #expect(feed.changes[0].tracks.updated == [UpdatedObject(id: .track(ids[0]), groups: .playStats)])
        #expect(feed.changes[1].tracks.inserted == [.track(ids[3])])
        #expect(feed.changes[1].tracks.updated.isEmpty)
        #expect(feed.changes[1].playlists.updated.map(\.id) == [.playlist(mine)])
        #expect(feed.changes[2].tracks.deleted == [.track(ids[1])])
        #expect(feed.changes[3].tracks.deleted == [.track(ids[3])])
        #expect(feed.changes.allSatisfy { !$0.tracks.updated.contains { $0.id == .track(ids[2]) } })
        let otherFeed = try await library.changes(since: start, scope: [other])
        #expect(otherFeed.changes.count == 1)
        #expect(otherFeed.changes[0].tracks.updated.map(\.id) == [.track(ids[2])])
        let net = try await library.changeSummary(since: start, scope: [mine])
        #expect(net.tracks.deleted == [.track(ids[1])])  // 3 entered and was deleted: nothing
        #expect(net.tracks.updated.map(\.id) == [.track(ids[0])])
        #expect(net.tracks.inserted.isEmpty)
        // Deleting the scoped playlist removes its tracks from view.
        try await library.write { batch in try batch.deletePlaylist(mine) }
        let after = try await library.changes(since: feed.token, scope: [mine])
        #expect(after.changes.count == 1)
        #expect(after.changes[0].playlists.deleted == [.playlist(mine)])
        #expect(after.changes[0].tracks.deleted == [.track(ids[0])])
    }

    @Test func limitedPagesContinueFromTheirToken() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let start = try await library.currentToken()
        for n in 0..<7 { try await library.write { try $0.insert(sampleTrack(n)) } }
        var token = start
        var seen: [PersistentChange] = []
        var pages = 0
        while true {
            let feed = try await library.changes(since: token, limit: 3)
            seen += feed.changes
            token = feed.token
            pages += 1
            if !feed.hasMore { break }
        }
        #expect(pages == 3)
        #expect(seen.map(\.token.transaction) == Array(1...7))
        #expect(token == (try await library.currentToken()))
    }

    @Test func readerDuringCommitsNeverSkipsOrRepeatsATransaction() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        var token = try await library.currentToken()
        let writerDone = Locked(false)
        let writer = Task {
            defer { writerDone.withLock { $0 = true } }
            for n in 0..<150 { try await library.write { try $0.insert(sampleTrack(n)) } }
        }
        var seen: [Int64] = []
        var inserted = 0
        // Reads until the feed has every insert; it ends because the writer does, not a clock.
        while true {
            // Read before the fetch: a writer seen finished then has every commit in the feed.
            let finished = writerDone.withLock { $0 }
            let feed = try await library.changes(since: token, limit: 7)
            for change in feed.changes {
                seen.append(change.token.transaction)
                inserted += change.tracks.inserted.count
            }
            token = feed.token
            // Done when the feed has every insert, or has all there is after a writer that failed.
            if !feed.hasMore, inserted >= 150 || finished { break }
            try await Task.sleep(for: .milliseconds(1))
        }
        try await writer.value
        #expect(seen == Array(1...150))
        #expect(inserted == 150)
    }

    @Test func compactionKeepsTheNewestEntriesAndSummarizesTheRest() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let start = try await library.currentToken()
        for n in 0..<10 { try await library.write { try $0.insert(sampleTrack(n)) } }
        let middle = try await library.currentToken()
        try await library.write { batch in try batch.updateTrack(1) { $0.rating = 20 } }
        try await library.write { batch in try batch.deleteTrack(2) }
        let report = try await library.compactHistory(retention: HistoryRetention(keepDays: nil, keepEntries: 2))
        #expect(report.transactions == 10)
        #expect(report.entries == 10)
        #expect(report.detailsFrom == middle)
        #expect(try await library.changes(since: middle).changes.count == 2)
        await #expect(throws: LibraryError.detailsUnavailable(token: start.description)) { try await library.changes(since: start) }
        let net = try await library.changeSummary(since: start)
        #expect(Set(net.tracks.inserted) == Set((1...10).filter { $0 != 2 }.map { ObjectKey.track(TrackID(Int64($0))) }))
        #expect(net.tracks.updated.isEmpty)  // inserted then updated: inserted
        #expect(net.tracks.deleted.isEmpty)  // inserted then deleted: nothing
        // Age rule: everything is younger than 90 days, so nothing more is compacted by default.
        let again = try await library.compactHistory()
        #expect(again.transactions == 0)
        // Days and entries together keep whichever is more.
        let old = try await library.compactHistory(retention: HistoryRetention(keepDays: 1, keepEntries: 1), now: Date().addingTimeInterval(86_400 * 3))
        #expect(old.transactions == 1)  // entries rule keeps the last transaction
    }
}
