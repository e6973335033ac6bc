import Foundation
import Shelf
import ShelfCore

/// How the jukebox plays: which mpv, on which audio output.
public struct JukeboxSettings: Sendable, Equatable {
    /// mpv's path; nil: the first `mpv` on PATH.
    public var mpvPath: String?
    /// mpv's `--ao` (`pulse`, `alsa`, `pipewire`, `null` for none); nil: mpv's own choice.
    public var audioOutput: String?

    /// Settings with mpv's defaults.
    public init(mpvPath: String? = nil, audioOutput: String? = nil) {
        self.mpvPath = mpvPath
        self.audioOutput = audioOutput
    }
}

/// Why the jukebox could not do what was asked (mpv missing, not answering, or refusing a command).
public struct JukeboxError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// What the jukebox is doing: Subsonic's jukeboxStatus and jukeboxPlaylist.
public struct JukeboxState: Sendable {
    /// The queue in order.
    public var entries: [TrackID]
    /// The entry playing or to play next (-1 with an empty queue).
    public var currentIndex: Int
    public var playing: Bool
    /// The volume, 0 to 1.
    public var gain: Double
    /// Seconds into the current entry.
    public var position: Int
}

/// The server's own audio output, played by mpv from Debian and driven over its JSON IPC socket.
/// Shelf keeps the queue and the current index; mpv plays one file at a time, and its `end-file`
/// event moves the queue on, so `set` can replace the queue without cutting off the song playing.
/// mpv starts on first use and quits with the server.
public final class Jukebox: Sendable {
    private struct State {
        var entries: [(id: TrackID, path: JukeboxFile)] = []
        var current = -1
        var gain = 1.0
        /// mpv's ID of the file Shelf last loaded: an end of any other (an older file's, during a skip) is not the queue's.
        var loadedEntry: Int?
        /// `current` is not playing yet (a `set` left another song playing): its end starts `current`, not the one after.
        var currentPending = false
        /// The server is stopping: mpv is not started again.
        var stopped = false
        /// Who last told the jukebox what to play: a song played to its end is their listen.
        var listener: UserID?

        /// `index` names an entry of the queue.
        func check(_ index: Int) throws(JukeboxError) {
            guard index >= 0, index < entries.count else { throw JukeboxError(message: "index \(index) is outside the queue of \(entries.count) songs") }
        }
    }

    private let settings: JukeboxSettings
    private let log: @Sendable (String) -> Void
    private let state = Locked(State())
    /// One action at a time, so two clients cannot interleave their commands.
    private let serial = NSLock()
    private let player = Locked<MPV?>(nil)
    private let events = DispatchQueue(label: "shelf.jukebox.events")
    private let finished = Locked<(@Sendable (TrackID, UserID) -> Void)?>(nil)

    /// A jukebox that will start mpv with `settings` when first used.
    public init(settings: JukeboxSettings, log: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.log = log
    }

    /// The actions of jukeboxControl, resolved (tracks with their files).
    public enum Action: Sendable {
        case status
        case set([(TrackID, JukeboxFile)])
        case start
        case stop
        case skip(index: Int, offset: Int)
        case add([(TrackID, JukeboxFile)])
        case clear
        case remove(index: Int)
        case shuffle
        case setGain(Double)
    }

    /// Calls `handler` with each song played to its end and the user who last told the jukebox
    /// what to play (their listen, with `source` jukebox).
    public func onFinished(_ handler: @escaping @Sendable (TrackID, UserID) -> Void) { finished.withLock { $0 = handler } }

    /// Does `action` (asked by `user`) and answers the state after it. Blocks while mpv answers (milliseconds).
    public func perform(_ action: Action, by user: UserID? = nil) throws(JukeboxError) -> JukeboxState {
        serial.lock()
        defer { serial.unlock() }
        if let user {
            if case .status = action {} else { state.withLock { $0.listener = user } }
        }
        let mpv = try running()
        switch action {
        case .status: break
        case .set(let tracks):
            // The song playing goes on; the queue around it is new.
            state.withLock { s in
                let playingID = s.current >= 0 && s.current < s.entries.count ? s.entries[s.current].id : nil
                s.entries = tracks.map { (id: $0.0, path: $0.1) }
                if let playingID, let index = s.entries.firstIndex(where: { $0.id == playingID }) {
                    s.current = index
                    s.currentPending = false
                } else {
                    s.current = s.entries.isEmpty ? -1 : 0
                    s.currentPending = playingID != nil
                }
            }
        case .start:
            let idle = (try? mpv.property("idle-active")) as? Bool ?? true
            if idle {
                let next = state.withLock { s -> JukeboxFile? in
                    guard !s.entries.isEmpty else { return nil }
                    if s.current < 0 || s.current >= s.entries.count { s.current = 0 }
                    return s.entries[s.current].path
                }
                if let next { try play(mpv, next, offset: 0) }
            } else {
                try mpv.command(["set_property", "pause", false])
            }
        case .stop:
            try mpv.command(["set_property", "pause", true])
        case .skip(let index, let offset):
            let path = try state.withLock { s throws(JukeboxError) -> JukeboxFile in
                try s.check(index)
                s.current = index
                return s.entries[index].path
            }
            try play(mpv, path, offset: offset)
        case .add(let tracks):
            state.withLock { s in
                s.entries += tracks.map { (id: $0.0, path: $0.1) }
                if s.current < 0, !s.entries.isEmpty { s.current = 0 }
            }
        case .clear:
            state.withLock { s in
                s.entries = []
                s.current = -1
            }
            try mpv.command(["stop"])
        case .remove(let index):
            let wasCurrent = try state.withLock { s throws(JukeboxError) -> Bool in
                try s.check(index)
                s.entries.remove(at: index)
                let wasCurrent = index == s.current
                if index < s.current { s.current -= 1 }
                if s.entries.isEmpty { s.current = -1 } else if s.current >= s.entries.count { s.current = s.entries.count - 1 }
                return wasCurrent
            }
            if wasCurrent { try mpv.command(["stop"]) }
        case .shuffle:
            // The current song goes first, the rest in a new order after it.
            state.withLock { s in
                guard !s.entries.isEmpty else { return }
                var rest = s.entries
                var first: [(id: TrackID, path: JukeboxFile)] = []
                if s.current >= 0, s.current < rest.count { first = [rest.remove(at: s.current)] }
                s.entries = first + rest.shuffled()
                s.current = 0
            }
        case .setGain(let gain):
            try mpv.command(["set_property", "volume", (gain * 100).rounded()])
            state.withLock { $0.gain = gain }
        }
        return try status(mpv)
    }

    /// Quits mpv for good (the server is stopping): a call still in flight does not start it again.
    public func stop() {
        serial.lock()
        defer { serial.unlock() }
        state.withLock { $0.stopped = true }
        player.withLock { $0 }?.quit()
    }

    private func status(_ mpv: MPV) throws(JukeboxError) -> JukeboxState {
        let idle = (try? mpv.property("idle-active")) as? Bool ?? true
        let paused = (try? mpv.property("pause")) as? Bool ?? false
        let position = idle ? 0 : ((try? mpv.property("time-pos")) as? Double).map { Int($0) } ?? 0
        return state.withLock { s in
            JukeboxState(entries: s.entries.map(\.id), currentIndex: s.current, playing: !idle && !paused, gain: s.gain, position: max(0, position))
        }
    }

    /// Plays `file` from `offset` seconds: the start (and a CUE track's end) goes with the load
    /// (named arguments, so the call reads the same whatever mpv's positional order), and the new
    /// file's playlist ID is kept.
    private func play(_ mpv: MPV, _ file: JukeboxFile, offset: Int) throws(JukeboxError) {
        var load: [String: Any] = ["name": "loadfile", "url": file.path, "flags": "replace"]
        var options: [String] = []
        let start = (file.start ?? 0) + Double(max(0, offset))
        if start > 0 { options.append("start=\(start)") }
        if let end = file.end { options.append("end=\(end)") }
        if !options.isEmpty { load["options"] = options.joined(separator: ",") }
        try mpv.command(load)
        let entry = (try? mpv.property("playlist/0/id")) as? Int
        state.withLock { s in
            s.loadedEntry = entry
            s.currentPending = false
        }
        try mpv.command(["set_property", "pause", false])
    }

    /// mpv, started now if it is not running.
    private func running() throws(JukeboxError) -> MPV {
        if state.withLock({ $0.stopped }) { throw JukeboxError(message: "the server is stopping") }
        if let mpv = player.withLock({ $0 }), mpv.isRunning { return mpv }
        let mpv = try MPV.start(settings) { [weak self] entry in self?.endOfFile(entry) }
        mpv.command(["set_property", "volume", (state.withLock { $0.gain } * 100).rounded()], ignoringErrors: true)
        player.withLock { $0 = mpv }
        log("shelf: jukebox: mpv started (audio output \(settings.audioOutput ?? "mpv's default"))")
        return mpv
    }

    /// A file played to its end (`entry`: mpv's playlist ID of it): the queue's next song starts,
    /// or the queue stops at its end. The end of a file Shelf has since replaced is ignored.
    private func endOfFile(_ entry: Int?) {
        events.async { [self] in
            serial.lock()
            defer { serial.unlock() }
            guard let mpv = player.withLock({ $0 }), !state.withLock({ $0.stopped }) else { return }
            var ended: (TrackID, UserID)?
            let next = state.withLock { s -> JukeboxFile? in
                if let entry, let loaded = s.loadedEntry, entry != loaded { return nil }
                if s.currentPending, s.current >= 0, s.current < s.entries.count { return s.entries[s.current].path }
                if s.current >= 0, s.current < s.entries.count, let listener = s.listener { ended = (s.entries[s.current].id, listener) }
                guard s.current + 1 < s.entries.count else { return nil }
                s.current += 1
                return s.entries[s.current].path
            }
            if let ended, let handler = finished.withLock({ $0 }) { handler(ended.0, ended.1) }
            if let next { try? play(mpv, next, offset: 0) }
        }
    }
}

/// What the jukebox plays for a song: its file, and for a track cut from an image by its CUE
/// sheet, the slice (seconds into the image).
public struct JukeboxFile: Sendable, Equatable {
    public var path: String
    public var start: Double?
    public var end: Double?

    /// A track's file, or its slice of an image.
    public init(_ track: Track) {
        path = track.filePath
        start = track.details.cue?.start
        end = track.details.cue?.end
    }
}
