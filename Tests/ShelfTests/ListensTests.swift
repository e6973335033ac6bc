import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

/// The listen log and the scrobble outbox in the engine: a play, its counts and its queued
/// scrobbles commit together; history outlives the file; only linked users queue, within their
/// rules and the services' rule of length; credentials are stored encrypted.
@Suite struct ListensTests {
    /// A library with a user (the owner) and three tracks: 200 s, 20 s, and a 300 s "Podcast" genre one.
    static func fixture() async throws -> (TemporaryLibrary, User, [TrackID]) {
        let fixture = try TemporaryLibrary()
        let library = fixture.library
        let user = try await library.addUser(name: "ann", password: "pass-word", admin: true)
        var details = TrackDetails()
        details.musicBrainz.recordingID = "8f3471b5-7e6a-48da-86a9-c1c07a0f47ae"
        let ids = try await library.write { batch in
            [
                try batch.insert(
                    Track(path: "/music/a.flac", title: "Song A", artist: "Zeta", album: "First", albumArtist: "Zeta", duration: 200, details: details)),
                try batch.insert(Track(path: "/music/b.flac", title: "Short", artist: "Eta", album: "First", duration: 20)),
                try batch.insert(Track(path: "/music/c.flac", title: "Talk", artist: "Theta", genre: "Podcast", duration: 300)),
            ]
        }
        return (fixture, user, ids)
    }

    @Test func aPlayIsKeptWithItsTextAndCountedInTheSameTransaction() async throws {
        let (fixture, user, ids) = try await Self.fixture()
        let library = fixture.library
        let at = Date(timeIntervalSince1970: 1_790_000_000)
        try await library.write { batch in
            try batch.recordPlay(ids[0], by: user.id, at: at, heard: 150, source: .playbackReport, client: "Symfonium")
        }
        let page = try await library.listens(of: user.id)
        #expect(page.listens.count == 1 && page.nextCursor == nil)
        let listen = try #require(page.listens.first)
        #expect(listen.track == ids[0] && listen.playedAt == at && listen.heard == 150 && listen.source == .playbackReport)
        #expect(listen.client == "Symfonium" && listen.artist == "Zeta" && listen.title == "Song A" && listen.album == "First")
        #expect(listen.recordingMBID == "8f3471b5-7e6a-48da-86a9-c1c07a0f47ae" && listen.duration == 200)
        // Its export line is JSON as ListenBrainz reads it, whatever the names hold.
        var odd = listen
        odd.title = "Say \"hi\"\n\\ \u{1}ばらの花"
        let line = try ListenExport.listenBrainzLine(odd)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let metadata = try #require(parsed["track_metadata"] as? [String: Any])
        #expect(
            parsed["listened_at"] as? Int == 1_790_000_000 && metadata["track_name"] as? String == odd.title && metadata["artist_name"] as? String == "Zeta")
        #expect((metadata["additional_info"] as? [String: Any])?["media_player"] as? String == "Symfonium" && !line.contains("\n"))
        // The owner's counts follow in the same write.
        let track = try #require(try await library.track(ids[0]))
        #expect(track.playCount == 1 && track.lastPlayed == at)
        #expect(try await library.userTrackData(for: user.id, tracks: [ids[0]])[ids[0]]?.playCount == 1)
        // A failing write leaves neither the listen nor the count.
        await #expect(throws: LibraryError.self) {
            try await library.write { batch in
                try batch.recordPlay(ids[0], by: user.id, at: at.addingTimeInterval(600))
                throw LibraryError.invalidValue(field: "test", value: "x", reason: "rolls the batch back")
            }
        }
        let count = try await library.listenCount(of: user.id)
        let plays = try await library.track(ids[0])?.playCount
        #expect(count == 1 && plays == 1)
        // Deleting the track keeps the listen's text; the link to the track goes.
        try await library.write { batch in try batch.deleteTrack(ids[0]) }
        let kept = try #require(try await library.listens(of: user.id).listens.first)
        #expect(kept.track == nil && kept.title == "Song A" && kept.artist == "Zeta" && kept.recordingMBID != nil)
    }

    @Test func onlyLinkedUsersQueueAndOnlyWhatTheRulesAllow() async throws {
        let (fixture, user, ids) = try await Self.fixture()
        let library = fixture.library
        let bob = try await library.addUser(name: "bob", password: "pass-word")
        let t0 = Date(timeIntervalSince1970: 1_790_000_000)
        // Nobody linked: nothing is queued.
        try await library.write { batch in try batch.recordPlay(ids[0], by: user.id, at: t0) }
        #expect(try await library.scrobbleQueues().isEmpty)
        try await library.write { batch in
            try batch.linkScrobbling(user.id, .listenbrainz, secret: "lb-token-123", account: "ann_lb", url: "http://127.0.0.1:9/apis/listenbrainz")
            try batch.linkScrobbling(user.id, .lastfm, secret: "session-key-456", account: "ann_fm", url: nil)
        }
        try await library.write { batch in
            try batch.recordPlay(ids[0], by: user.id, at: t0.addingTimeInterval(300), heard: 120)  // over half: queued
            try batch.recordPlay(ids[0], by: user.id, at: t0.addingTimeInterval(600), heard: 60)  // under half and 4 minutes: not
            try batch.recordPlay(ids[1], by: user.id, at: t0.addingTimeInterval(900))  // 20 s: never
            try batch.recordPlay(ids[0], by: bob.id, at: t0.addingTimeInterval(1_200))  // bob linked nothing
            try batch.recordPlay(ids[2], by: user.id, at: t0.addingTimeInterval(1_500), source: .imported("lastfm"))  // imports never
        }
        for service in ScrobbleService.allCases {
            let outbox = try await library.scrobbleOutbox(of: user.id, service, limit: 10)
            #expect(outbox.map(\.listen.playedAt) == [t0.addingTimeInterval(300)], "\(service)")
        }
        #expect(try await library.scrobbleOutbox(of: bob.id, .listenbrainz, limit: 10).isEmpty)
        // Rules: a genre, a client (without case), a library.
        try await library.write { batch in try batch.setScrobbleRules(user.id, ScrobbleRules(libraries: [], genres: ["podcast"], clients: ["DSub"])) }
        try await library.write { batch in
            try batch.recordPlay(ids[2], by: user.id, at: t0.addingTimeInterval(1_800))
            try batch.recordPlay(ids[0], by: user.id, at: t0.addingTimeInterval(2_100), client: "dsub")
            try batch.recordPlay(ids[0], by: user.id, at: t0.addingTimeInterval(2_400), client: "Symfonium")
        }
        #expect(try await library.scrobbleOutbox(of: user.id, .listenbrainz, limit: 10).count == 2)
        #expect(try await library.scrobbleRules(of: user.id).genres == ["podcast"])
        // Every listen is in the log whatever was sent.
        #expect(try await library.listenCount(of: user.id) == 8)
        // The credentials are encrypted at rest, and read back whole.
        #expect(try await library.scrobbleSecret(of: user.id, .listenbrainz) == "lb-token-123")
        let blob = try await library.read { db in
            try db.query("SELECT secret FROM scrobble_link", []) { try $0.data(0) }
        }
        #expect(blob.count == 2 && !blob.contains { $0.range(of: Data("lb-token-123".utf8)) != nil || $0.range(of: Data("session-key-456".utf8)) != nil })
    }

    @Test func theOutboxSendsInOrderPausesAndForgetsADeletedUser() async throws {
        let (fixture, user, ids) = try await Self.fixture()
        let library = fixture.library
        let t0 = Date(timeIntervalSince1970: 1_790_000_000)
        try await library.write { batch in try batch.linkScrobbling(user.id, .listenbrainz, secret: "tok", account: "", url: nil) }
        try await library.write { batch in
            // Recorded out of order (an offline client's queue): sent in the order played.
            for offset in [900.0, 300, 600] { try batch.recordPlay(ids[0], by: user.id, at: t0.addingTimeInterval(offset)) }
        }
        var outbox = try await library.scrobbleOutbox(of: user.id, .listenbrainz, limit: 10)
        #expect(outbox.map(\.listen.playedAt) == [300.0, 600, 900].map { t0.addingTimeInterval($0) })
        // A request whose answer never came leaves its rows uncertain; a sent one leaves.
        try await library.write { batch in try batch.markScrobblesSending(outbox.map(\.id)) }
        try await library.write { batch in
            try batch.markScrobblesRetry(
                outbox.map(\.id), user: user.id, service: .listenbrainz, error: "no answer", next: Date().addingTimeInterval(60), answered: false)
        }
        outbox = try await library.scrobbleOutbox(of: user.id, .listenbrainz, limit: 10)
        #expect(outbox.allSatisfy { $0.uncertain && $0.attempts == 1 })
        #expect(try await library.scrobbleQueues().first?.due != nil)
        try await library.write { batch in try batch.markScrobblesSent([outbox[0].id], user: user.id, service: .listenbrainz) }
        // A refused token pauses the queue and keeps it; relinking resumes it.
        try await library.write { batch in try batch.setScrobblingPaused(user.id, .listenbrainz, reason: "ListenBrainz refused the token") }
        var state = try #require(try await library.scrobbleStates(of: user.id).first)
        #expect(state.paused != nil && state.pauseReason == "ListenBrainz refused the token" && state.queued == 2 && state.sent == 1)
        #expect(try await library.scrobbleQueues().isEmpty)
        try await library.write { batch in try batch.linkScrobbling(user.id, .listenbrainz, secret: "tok2", account: "", url: nil) }
        state = try #require(try await library.scrobbleStates(of: user.id).first)
        #expect(state.paused == nil && state.queued == 2)
        #expect(try await library.scrobbleQueues().first?.due == nil)
        // A listen refused for its data is set aside, not lost.
        try await library.write { batch in try batch.markScrobbleRefused(outbox[1].id, reason: "HTTP 400") }
        state = try #require(try await library.scrobbleStates(of: user.id).first)
        #expect(state.queued == 1 && state.refused == 1)
        // A deleted user's links, outbox and listens go with them.
        _ = try await library.addUser(name: "admin2", password: "pass-word", admin: true)
        try await library.deleteUser(user.id)
        let left = try await library.read { db in
            try db.scalar(Int.self, "SELECT (SELECT count(*) FROM scrobble_outbox) + (SELECT count(*) FROM scrobble_link) + (SELECT count(*) FROM listen)")
        }
        #expect(left == 0)
    }

    @Test func listensPageByKeysetAndStatsCountPerPeriodAndDay() async throws {
        let (fixture, user, ids) = try await Self.fixture()
        let library = fixture.library
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        try await library.write { batch in
            // 12 plays of A over the last 12 days, 3 of Talk today, 1 of Short 400 days ago.
            for day in 0..<12 { try batch.recordPlay(ids[0], by: user.id, at: now.addingTimeInterval(-Double(day) * 86_400 - 60)) }
            for n in 0..<3 { try batch.recordPlay(ids[2], by: user.id, at: now.addingTimeInterval(-Double(n + 1) * 600)) }
            try batch.recordPlay(ids[1], by: user.id, at: now.addingTimeInterval(-400 * 86_400))
        }
        var seen: [Listen] = []
        var cursor: String?
        repeat {
            let page = try await library.listens(of: user.id, after: cursor, limit: 5)
            seen += page.listens
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen.count == 16 && Set(seen.map(\.id)).count == 16)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.playedAt >= $1.playedAt })
        await #expect(throws: LibraryError.self) { try await library.listens(of: user.id, after: "not-a-cursor") }

        let week = try await library.listeningStats(of: user.id, period: .week, now: now)
        #expect(week.plays == 7 + 3 && week.artists.first?.name == "Zeta" && week.artists.first?.plays == 7)
        #expect(week.tracks.map(\.name) == ["Song A", "Talk"] && week.tracks.first?.track == ids[0])
        #expect(week.days.count == 8 && week.days.map(\.plays).reduce(0, +) == 10)
        let all = try await library.listeningStats(of: user.id, period: .all, now: now)
        #expect(all.plays == 16 && all.days.first?.plays == 1 && all.days.count == 401)
        #expect(all.albums.first == ListeningStats.Entry(name: "First", artist: "Zeta", track: nil, plays: 12))
        // A reader nine hours east sees today's plays on their own calendar day.
        let tokyo = try await library.listeningStats(of: user.id, period: .week, now: now, utcOffset: 9 * 3_600)
        #expect(tokyo.days.map(\.plays).reduce(0, +) == 10)
    }
}
