import Foundation
import Shelf
import ShelfCore

/// Bookmarks: the play queue a player saves to resume on another device, kept in the library
/// (per user, through a write batch), so it survives a restart (bookmarks themselves are not served yet).
extension SubsonicAPI {
    /// savePlayQueue: `id` (repeated) the songs, `current` one of them, `position` milliseconds into it.
    func savePlayQueue(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let ids = try p.values("id").map { text throws(SubsonicError) in try SubsonicParameters.track(text, "id") }
        // Checked even when the queue is cleared: a bad value is the client's mistake either way.
        let position = try p.int("position", default: 0, in: 0...Int(Int64.max)) ?? 0
        guard !ids.isEmpty else {
            try await context.write { batch in try batch.savePlayQueue(of: user.id, tracks: [], current: nil, position: 0, changedBy: "") }
            return .empty
        }
        let current = try p.value("current").map { text throws(SubsonicError) in try SubsonicParameters.track(text, "current") }
        if let current, !ids.contains(current) { throw SubsonicError(0, "current (tr-\(current)) is not one of the queue's songs") }
        // Songs that do not exist are refused, so a restored queue never names nothing.
        let known = Set(try await library.tracks(ids: ids).tracks.map(\.id))
        if let missing = ids.first(where: { !known.contains($0) }) { throw SubsonicError.notFound("song tr-\(missing)") }
        let client = p.value("c") ?? ""
        try await context.write { batch in try batch.savePlayQueue(of: user.id, tracks: ids, current: current, position: position, changedBy: client) }
        return .empty
    }

    /// getPlayQueue: the user's saved queue (songs deleted since are left out), or an empty answer.
    func getPlayQueue(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        guard let queue = try await library.playQueue(of: user.id) else { return .empty }
        let entries = try await songs(queue.tracks, for: user)
        return .element("playQueue", SubsonicPlayQueue(
            current: queue.current, position: queue.position, username: user.name, changed: queue.changed, changedBy: queue.changedBy, entries: entries))
    }
}
