import Foundation
import Shelf
import ShelfCore

/// Bookmarks and the play queue a player saves to resume on another device (by song or by index,
/// the `indexBasedQueue` extension), kept in the library per user, so they survive a restart.
extension SubsonicAPI {
    /// savePlayQueue: `id` (repeated) the songs, `current` one of them, `position` milliseconds into it.
    func savePlayQueue(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let current = try p.value("current").map { text throws(SubsonicError) in try SubsonicParameters.track(text, "current") }
        return try await saveQueue(call, current: current, index: nil)
    }

    /// savePlayQueueByIndex: `id` (repeated), `currentIndex` counted from 0 (a song may be queued twice).
    func savePlayQueueByIndex(_ call: SubsonicCall) async throws -> SubsonicReply {
        let index = try call.parameters.int("currentIndex", in: 0...Int(Int32.max))
        return try await saveQueue(call, current: nil, index: index)
    }

    private func saveQueue(_ call: SubsonicCall, current: TrackID?, index: Int?) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let ids = try p.values("id").map { text throws(SubsonicError) in try SubsonicParameters.track(text, "id") }
        // Checked even when the queue is cleared: a bad value is the client's mistake either way.
        let position = try p.int("position", default: 0, in: 0...Int(Int64.max)) ?? 0
        guard !ids.isEmpty else {
            if let index { throw SubsonicError(0, "currentIndex \(index) is past the end of an empty queue") }
            try await context.write { batch in try batch.savePlayQueue(of: user.id, tracks: [], current: nil, position: 0, changedBy: "") }
            return .empty
        }
        if let current, !ids.contains(current) { throw SubsonicError(0, "current (tr-\(current)) is not one of the queue's songs") }
        if let index, index >= ids.count { throw SubsonicError(0, "currentIndex \(index) is past the end of a queue of \(ids.count) songs") }
        // Songs that do not exist are refused, so a restored queue never names nothing.
        let known = Set(try await library.tracks(ids: ids).tracks.map(\.id))
        if let missing = ids.first(where: { !known.contains($0) }) { throw SubsonicError.notFound("song tr-\(missing)") }
        let client = p.value("c") ?? ""
        try await context.write { batch in
            try batch.savePlayQueue(of: user.id, tracks: ids, current: current, currentIndex: index, position: position, changedBy: client)
        }
        return .empty
    }

    /// getPlayQueue: the user's saved queue (songs deleted since are left out), or an empty answer.
    func getPlayQueue(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        guard let queue = try await library.playQueue(of: user.id) else { return .empty }
        let entries = try await songs(queue.tracks, for: user)
        return .element(
            "playQueue",
            SubsonicPlayQueue(
                current: queue.current, position: queue.position, username: user.name, changed: queue.changed, changedBy: queue.changedBy, entries: entries))
    }

    /// getPlayQueueByIndex: the same queue with the current song's place instead of its ID.
    func getPlayQueueByIndex(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        guard let queue = try await library.playQueue(of: user.id) else { return .empty }
        let entries = try await songs(queue.tracks, for: user)
        return .element(
            "playQueueByIndex",
            SubsonicPlayQueue(
                current: nil, currentIndex: queue.currentIndex, position: queue.position, username: user.name, changed: queue.changed,
                changedBy: queue.changedBy, entries: entries))
    }

    /// getBookmarks: the user's bookmarks, each with its song.
    func getBookmarks(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let marks = try await library.bookmarks(of: user.id)
        let songs = Dictionary(try await songs(marks.map(\.track), for: user).map { ($0.track.id, $0) }, uniquingKeysWith: { a, _ in a })
        let bookmarks = marks.compactMap { mark in songs[mark.track].map { SubsonicBookmark(bookmark: mark, username: user.name, entry: $0) } }
        return .container("bookmarks", "bookmark", bookmarks)
    }

    /// createBookmark: `id` a song, `position` milliseconds, `comment` optional; replaces the user's last one in that song.
    func createBookmark(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let id = try p.trackID()
        guard let position = try p.int("position", in: 0...Int(Int64.max)) else { throw SubsonicError.missing("position") }
        let comment = p.value("comment") ?? ""
        try await context.write { batch in try batch.saveBookmark(of: user.id, track: id, position: position, comment: comment) }
        return .empty
    }

    /// deleteBookmark: the user's bookmark in song `id` (error 70 when there is none).
    func deleteBookmark(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let id = try call.parameters.trackID()
        try await context.write { batch in try batch.deleteBookmark(of: user.id, track: id) }
        return .empty
    }
}

/// A bookmark: where in which song, with the user's comment.
struct SubsonicBookmark: SubsonicModel {
    let bookmark: Bookmark
    let username: String
    let entry: SubsonicSong

    func write(to w: inout SubsonicWriter) {
        w.attribute("position", bookmark.position)
        w.attribute("username", username)
        w.attribute("comment", bookmark.comment.isEmpty ? nil : bookmark.comment)
        w.attribute("created", bookmark.created)
        w.attribute("changed", bookmark.changed)
        w.element("entry", entry)
    }
}
