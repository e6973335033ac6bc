import Foundation
import Shelf
import ShelfCore

/// What each user is playing now (scrobble with `submission=false`), in the server's memory: it
/// is only ever "now", so a restart losing it loses nothing. An entry older than `horizon` is gone.
final class SubsonicNowPlaying: Sendable {
    /// One user's current song, since when, on which client.
    struct Entry: Sendable {
        let track: TrackID
        let user: User
        let since: Date
        let player: String
    }

    private let entries = Locked<[UserID: Entry]>([:])
    /// How long a "now playing" lasts without another.
    let horizon: TimeInterval = 30 * 60

    /// `user` started `track` on `player`.
    func record(_ track: TrackID, user: User, player: String, at date: Date = Date()) {
        entries.withLock { $0[user.id] = Entry(track: track, user: user, since: date, player: player) }
    }

    /// `user` stopped playing.
    func remove(_ user: UserID) {
        _ = entries.withLock { $0.removeValue(forKey: user) }
    }

    /// The current entries, most recent first.
    func current(now: Date = Date()) -> [Entry] {
        entries.withLock { entries in
            entries = entries.filter { now.timeIntervalSince($0.value.since) < horizon }
            return entries.values.sorted { $0.since > $1.since }
        }
    }
}
