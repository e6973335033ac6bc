import Foundation
import Shelf
import ShelfCore

/// Who is listening to what, from reportPlayback, so that one listen is counted as one play
/// however the client reports it (reportPlayback, scrobble, or both).
///
/// The rule: a listen starts with `starting` or with a report naming another song, and is
/// counted once, when a report's position reaches half the song or four minutes, whichever
/// comes first (Last.fm's rule). A scrobble submission for the song of a listen already counted
/// is not counted again; one that comes first marks the listen counted.
final class SubsonicListens: Sendable {
    struct Listen: Sendable {
        let track: TrackID
        let started: Date
        var counted: Bool
        var ended: Bool
    }

    private let listens = Locked<[UserID: Listen]>([:])

    /// The position at which a listen of a song of `duration` seconds counts (milliseconds).
    static func threshold(duration: Double?) -> Int {
        guard let duration, duration > 0 else { return 240_000 }
        return min(240_000, Int((duration * 500).rounded(.up)))
    }

    /// What one report meant: a listen began with it (`started`), it completes a listen not yet
    /// counted (`counted`), and when the listen began.
    struct Report: Sendable {
        var started = false
        var counted = false
        var startedAt: Date?
    }

    /// Records a report and answers whether it began a listen and whether it completes one not yet counted.
    func report(user: UserID, track: TrackID, state: String, position: Int, duration: Double?, countable: Bool, now: Date = Date()) -> Report {
        listens.withLock { listens in
            var listen = listens[user]
            var result = Report()
            if state == "starting" || listen?.track != track || listen?.ended == true {
                // A listen is dated from when its playing began: the first report's position back from now.
                listen = Listen(track: track, started: now.addingTimeInterval(-Double(position) / 1000), counted: false, ended: false)
                result.started = state != "stopped"
            }
            if countable, listen?.counted == false, position >= Self.threshold(duration: duration) {
                listen?.counted = true
                result.counted = true
            }
            result.startedAt = listen?.started
            if state == "stopped" { listen?.ended = true }
            listens[user] = listen
            return result
        }
    }

    /// A scrobble submission of `track` played at `date`: whether to count it (false when the
    /// user's listen of it, begun around then, was counted already).
    func scrobble(user: UserID, track: TrackID, duration: Double?, at date: Date = Date()) -> Bool {
        listens.withLock { listens in
            guard var listen = listens[user], listen.track == track else { return true }
            // A scrobble of a play before this listen began (an offline queue) is its own play.
            let window = max(duration ?? 0, 240) + 300
            guard date >= listen.started.addingTimeInterval(-60), date.timeIntervalSince(listen.started) < window else { return true }
            if listen.counted { return false }
            listen.counted = true
            listens[user] = listen
            return true
        }
    }
}
