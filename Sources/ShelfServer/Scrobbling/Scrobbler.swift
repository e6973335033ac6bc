import Foundation
import Shelf
import ShelfCore

/// Linking a user to a service: the credential is checked with the service first, then stored
/// encrypted. Used by the native API and by `shelf user link`, which runs without a server.
public struct ScrobbleAccounts: Sendable {
    public let library: Library
    public let settings: ScrobbleSettings

    /// Links over `library` with the server's `settings`.
    public init(library: Library, settings: ScrobbleSettings) {
        self.library = library
        self.settings = settings
    }

    /// Links ListenBrainz (or a compatible server at `url`) with a user token.
    public func linkListenBrainz(_ user: UserID, token: String, url: String? = nil) async throws -> ScrobbleState {
        let token = token.trimmingCharacters(in: .whitespacesAndNewlines)
        let client = ListenBrainzClient(base: url ?? settings.listenbrainzURL)
        let account = try await client.validate(token: token).get()
        try await library.write { batch in try batch.linkScrobbling(user, .listenbrainz, secret: token, account: account, url: url) }
        return try await state(user, .listenbrainz)
    }

    /// Links Last.fm with a user name and password (`auth.getMobileSession`); the password is
    /// never stored, only the session key.
    public func linkLastfm(_ user: UserID, username: String, password: String, url: String? = nil) async throws -> ScrobbleState {
        let session = try await lastfm(url).mobileSession(username: username, password: password).get()
        return try await store(user, session, url: url, fallback: username)
    }

    /// Links Last.fm with a token the user authorised on Last.fm's page (the web flow).
    public func linkLastfm(_ user: UserID, token: String) async throws -> ScrobbleState {
        let session = try await lastfm(nil).webSession(token: token).get()
        return try await store(user, session, url: nil, fallback: "")
    }

    /// Where a user authorises Shelf at Last.fm, coming back to `callback` with `?token=`.
    public func lastfmAuthorizeURL(callback: String) throws -> String {
        let client = try lastfm(nil)
        return settings.lastfmAuthPage + "?api_key=\(LastfmClient.encode(client.apiKey))&cb=\(LastfmClient.encode(callback))"
    }

    private func store(_ user: UserID, _ session: (name: String, key: String), url: String?, fallback: String) async throws -> ScrobbleState {
        let account = session.name.isEmpty ? fallback : session.name
        try await library.write { batch in try batch.linkScrobbling(user, .lastfm, secret: session.key, account: account, url: url) }
        return try await state(user, .lastfm)
    }

    func lastfm(_ url: String?) throws(ScrobbleError) -> LastfmClient {
        guard let key = settings.lastfmAPIKey, let secret = settings.lastfmSecret else {
            throw ScrobbleError(message: "Last.fm is not set up on this server: the operator sets lastfm-api-key and lastfm-secret", refusedCredentials: false)
        }
        return LastfmClient(base: url ?? settings.lastfmURL, apiKey: key, secret: secret)
    }

    private func state(_ user: UserID, _ service: ScrobbleService) async throws -> ScrobbleState {
        guard let state = try await library.scrobbleStates(of: user).first(where: { $0.service == service }) else {
            throw LibraryError.invalidValue(field: "service", value: service.rawValue, reason: "is not linked")
        }
        return state
    }
}

/// The server's scrobbler: it sends each linked user's queued listens to their services in the
/// order they were played, with each listen's own time, and says what is playing now.
///
/// A listen is queued in its own transaction (`WriteBatch.recordPlay`), so nothing is lost to a
/// crash or an outage. Before a request goes out its rows are marked `sending`; after a crash
/// or a request that got no clear answer they are sent again one per request, so a service
/// that keys listens by their second (ListenBrainz, Last.fm, Maloja) keeps one of each. A
/// failure waits `retryMin`, doubling to `retryMax`; a refused credential pauses the queue.
public final class Scrobbler: Sendable {
    private let library: Library
    private let settings: ScrobbleSettings
    private let log: @Sendable (String) -> Void
    private let wake: AsyncStream<Void>.Continuation
    private let signals: AsyncStream<Void>
    private let task = Locked<Task<Void, Never>?>(nil)
    /// Last.fm web authorisations under way: the `state` sent out with each, whose user it is and
    /// until when it is good, so that a callback carries only a flow its own user began.
    private let webFlows = Locked<[String: (user: UserID, expires: Date)]>([:])

    /// A scrobbler over `library`; `start` begins sending.
    public init(library: Library, settings: ScrobbleSettings, log: @escaping @Sendable (String) -> Void) {
        self.library = library
        self.settings = settings
        self.log = log
        (signals, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Linking with this server's settings.
    public var accounts: ScrobbleAccounts { ScrobbleAccounts(library: library, settings: settings) }

    /// Starts sending; what was queued before the server started goes first.
    public func start() {
        wake.yield()
        let job = Task { [self] in await run() }
        task.withLock { $0 = job }
    }

    /// A new `state` for a Last.fm web authorisation `user` begins (good for ten minutes).
    public func beginLastfmFlow(for user: UserID, now: Date = Date()) -> String {
        let state = UUID().uuidString.lowercased()
        webFlows.withLock { flows in
            flows = flows.filter { $0.value.expires > now }
            flows[state] = (user, now.addingTimeInterval(600))
        }
        return state
    }

    /// Whether `state` is a flow `user` began and has not finished; it is used up either way.
    public func finishLastfmFlow(_ state: String, for user: UserID, now: Date = Date()) -> Bool {
        guard let flow = webFlows.withLock({ $0.removeValue(forKey: state) }) else { return false }
        return flow.user == user && flow.expires > now
    }

    /// Something may have been queued: look now.
    public func poke() { wake.yield() }

    /// Stops; a request in flight finishes or times out, and its rows stay marked.
    public func stop() async {
        wake.finish()
        let job = task.withLock { $0 }
        job?.cancel()
        await job?.value
    }

    /// A user began playing a track: each linked service hears of it, best effort (nothing
    /// is queued or retried). Nothing is sent for a user who linked nothing.
    public func playing(_ id: TrackID, user: UserID, client: String = "") {
        let (library, settings) = (library, settings)
        Task.detached(priority: .utility) {
            guard let states = try? await library.scrobbleStates(of: user), states.contains(where: { $0.paused == nil }),
                let track = try? await library.track(id), try await library.scrobbleExcluded(track, user: user, client: client) == false
            else { return }
            let listen = Listen(
                id: 0, user: user, track: id, playedAt: Date(), heard: nil, source: .api, client: client, artist: track.artist ?? "",
                title: track.title ?? "", album: track.album ?? "", albumArtist: track.albumArtist ?? "", duration: track.duration,
                recordingMBID: track.details.musicBrainz.recordingID, releaseMBID: track.details.musicBrainz.releaseID)
            for state in states where state.paused == nil {
                guard let secret = try? await library.scrobbleSecret(of: user, state.service) else { continue }
                switch state.service {
                case .listenbrainz: await ListenBrainzClient(base: state.url ?? settings.listenbrainzURL).playingNow(listen, token: secret)
                case .lastfm:
                    if let client = try? ScrobbleAccounts(library: library, settings: settings).lastfm(state.url) {
                        await client.nowPlaying(listen, sessionKey: secret)
                    }
                }
            }
        }
    }

    private func run() async {
        var iterator = signals.makeAsyncIterator()
        var timer: Task<Void, Never>?
        while await iterator.next() != nil, !Task.isCancelled {
            timer?.cancel()
            var wait = 600.0
            do {
                for queue in try await library.scrobbleQueues() {
                    if Task.isCancelled { return }
                    let delay = queue.due.map { $0.timeIntervalSinceNow } ?? 0
                    if delay > 0 {
                        wait = min(wait, delay)
                        continue
                    }
                    if let again = try await drain(queue) { wait = min(wait, again) }
                }
            } catch is CancellationError {
                return
            } catch {
                log("shelf: scrobble: \(error)")
                wait = min(wait, 5)
            }
            let (wake, seconds) = (self.wake, max(0.01, wait))
            timer = Task {
                do { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) } catch { return }
                wake.yield()
            }
        }
        timer?.cancel()
    }

    /// Sends one queue until it is empty, paused or failing; answers how long to wait before the
    /// next try when it failed.
    private func drain(_ queue: OutboxQueue) async throws -> Double? {
        let (user, service) = (queue.user, queue.service)
        guard let secret = try await library.scrobbleSecret(of: user, service) else { return nil }
        while !Task.isCancelled {
            let items = try await library.scrobbleOutbox(of: user, service, limit: service == .listenbrainz ? settings.batch : 1)
            guard let first = items.first else { return nil }
            // An uncertain listen goes alone: a batch holding one the service has may be cut short there.
            let group = first.uncertain ? [first] : Array(items.prefix { !$0.uncertain })
            let ids = group.map(\.id)
            try await library.write { batch in try batch.markScrobblesSending(ids) }
            let outcome: SendOutcome
            switch service {
            case .listenbrainz:
                outcome = await ListenBrainzClient(base: queue.url ?? settings.listenbrainzURL).submit(group.map(\.listen), token: secret)
            case .lastfm:
                do {
                    outcome = try await ScrobbleAccounts(library: library, settings: settings).lastfm(queue.url)
                        .scrobble(first.listen, sessionKey: secret, uncertain: first.uncertain)
                } catch {
                    outcome = .credentials(error.message)
                }
            }
            switch outcome {
            case .sent:
                try await library.write { batch in try batch.markScrobblesSent(ids, user: user, service: service) }
            case .retry(let reason, let answered):
                let attempts = group.map(\.attempts).max() ?? 0
                let wait = min(settings.retryMax, settings.retryMin * pow(2, Double(min(attempts, 30))))
                try await library.write { batch in
                    try batch.markScrobblesRetry(ids, user: user, service: service, error: reason, next: Date().addingTimeInterval(wait), answered: answered)
                }
                log("shelf: scrobble: \(service.title) for \(queue.userName): \(reason); \(group.count) listens wait \(Int(wait.rounded())) s")
                return wait
            case .credentials(let reason):
                try await library.write { batch in
                    try batch.markScrobblesRetry(ids, user: user, service: service, error: reason, next: Date(), answered: true)
                    try batch.setScrobblingPaused(user, service, reason: reason)
                }
                log("shelf: scrobble: \(service.title) for \(queue.userName) paused: \(reason)")
                return nil
            case .listen(let reason):
                if group.count == 1 {
                    try await library.write { batch in try batch.markScrobbleRefused(ids[0], reason: reason) }
                    log("shelf: scrobble: \(service.title) refused a listen of \(queue.userName) (\(first.listen.artist) – \(first.listen.title)): \(reason)")
                } else {
                    // Which one? Each is sent alone next.
                    try await library.write { batch in
                        try batch.markScrobblesRetry(ids, user: user, service: service, error: reason, next: Date(), answered: false)
                    }
                }
            }
        }
        return nil
    }
}
