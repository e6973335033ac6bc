import Foundation
import Shelf
import ShelfCore

/// How the server fetches podcasts: where the files go and the limits every fetch keeps.
public struct PodcastSettings: Sendable, Equatable {
    /// The podcasts folder: one folder per channel (`pc-N` → `N/`), episodes as `EPISODE.EXT`.
    public var folder: URL
    /// Whether feeds and episodes on private, loopback and link-local addresses may be fetched
    /// (`shelf serve --podcast-allow-private`); off, so that a subscribed URL cannot reach the
    /// server's own network.
    public var allowPrivate = false
    /// The largest episode kept (bytes); a bigger one fails as `error`, nothing kept.
    public var maxEpisodeBytes: Int64 = 2 << 30
    /// The largest feed document and channel picture read.
    public var maxFeedBytes: Int64 = 16 << 20
    public var maxImageBytes: Int64 = 16 << 20
    /// Redirects followed per fetch.
    public var maxRedirects = 5
    /// Time limits: a feed or picture, and an episode.
    public var feedTimeoutSeconds = 60
    public var episodeTimeoutSeconds = 4 * 3600
    /// How often every channel is refreshed; nil: only on request (refreshPodcasts).
    public var refreshInterval: Duration? = .seconds(86_400)

    /// Settings with the podcasts folder and the defaults.
    public init(folder: URL) { self.folder = folder }
}

/// Podcasts for the server: subscribes, refreshes feeds and downloads episodes in the background,
/// one fetch at a time per host, through libcurl within `PodcastSettings`' limits. A failure is
/// recorded on the channel or episode (`error` and its message), never thrown at a request; an
/// episode's file is named in the library only after its download finished whole.
public final class PodcastService: Sendable {
    private let library: Library
    public let settings: PodcastSettings
    private let log: @Sendable (String) -> Void
    private let changed: @Sendable () -> Void
    /// The last job queued per host: the next one waits for it.
    private let hosts = Locked<[String: Task<Void, Never>]>([:])
    private let running = Locked<[ObjectIdentifier: Fetcher.Cancel]>([:])
    /// Episodes downloading now, with their channel and the flag that stops them (a delete does).
    private let downloads = Locked<[SavedID: (channel: SavedID, cancel: Fetcher.Cancel)]>([:])
    /// Refreshes (`c` + ID) and downloads (`e` + ID) queued or running: asked again meanwhile, they are not queued twice.
    private let queued = Locked<Set<String>>([])
    /// Fetches at once across every host.
    private let slots = Fetcher.Slots(limit: 4)
    private let schedule = Locked<Task<Void, Never>?>(nil)

    /// A service over `library`; `changed` is called after each write (to wake live clients).
    public init(library: Library, settings: PodcastSettings, log: @escaping @Sendable (String) -> Void, changed: @escaping @Sendable () -> Void) {
        self.library = library
        self.settings = settings
        self.log = log
        self.changed = changed
    }

    /// Recovers from a stop in the middle of fetches (episodes left `downloading` become `error`,
    /// their part files removed) and starts the refresh schedule.
    public func start() {
        Task {
            do {
                for channel in try await library.podcastChannels() {
                    if channel.status == .downloading || channel.status == .new {
                        try await write { try $0.setPodcastChannelStatus(channel.id, .new) }
                        refresh(channel.id)
                    }
                    // Downloading in the store but not here: left so by a stop (one started since is in `downloads`).
                    for episode in try await library.podcastEpisodes(of: channel.id)
                    where episode.status == .downloading && downloads.withLock({ $0[episode.id] == nil }) && !isQueued("e\(episode.id)") {
                        try? FileManager.default.removeItem(at: partURL(episode))
                        try await write {
                            try $0.setPodcastEpisodeStatus(
                                episode.id, .error, error: "the download was interrupted by a server stop; download it again", ifStatus: .downloading)
                        }
                    }
                }
            } catch {
                log("shelf: podcasts: could not check the podcasts after start: \(error)")
            }
        }
        guard let interval = settings.refreshInterval else { return }
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                await self.refreshAll()
            }
        }
        schedule.withLock { $0 = task }
    }

    /// Stops the schedule and every fetch in flight (their episodes end as `error` on next start).
    public func stop() {
        schedule.withLock { $0?.cancel() }
        for cancel in running.withLock({ Array($0.values) }) { cancel.cancel() }
    }

    // MARK: Requests

    /// Subscribes to `url` and queues its first refresh. A literal private address is refused at
    /// once unless allowed; one reached through a name is refused when it is dialled.
    public func subscribe(_ url: String) async throws -> PodcastChannel {
        try checkAddress(url, field: "url")
        let channel = try await write { try $0.addPodcastChannel(url: url) }
        refresh(channel.id)
        return channel
    }

    /// Queues a refresh of every channel.
    public func refreshAll() async {
        guard let channels = try? await library.podcastChannels() else { return }
        for channel in channels { refresh(channel.id) }
    }

    /// Queues a refresh of one channel: its feed read, episodes added, its picture fetched. One
    /// already queued or running is not queued again.
    public func refresh(_ id: SavedID) {
        guard claim("c\(id)") else { return }
        Task {
            guard let channel = try? await library.podcastChannel(id) else { return release("c\(id)") }
            try? await write { try $0.setPodcastChannelStatus(id, .downloading) }
            await enqueue(channel.url) {
                await self.performRefresh(channel)
                self.release("c\(id)")
            }
        }
    }

    private func claim(_ key: String) -> Bool { queued.withLock { $0.insert(key).inserted } }
    private func release(_ key: String) { _ = queued.withLock { $0.remove(key) } }
    private func isQueued(_ key: String) -> Bool { queued.withLock { $0.contains(key) } }

    /// Marks an episode `downloading` and queues its download; one already downloaded or
    /// downloading is left as it is. Throws when the episode has nothing to download.
    public func download(_ id: SavedID) async throws {
        guard let episode = try await library.podcastEpisode(id) else { throw LibraryError.objectNotFound(kind: "podcast episode", id: "pe-\(id)") }
        if episode.status == .completed || episode.status == .downloading { return }
        guard !episode.url.isEmpty else {
            throw LibraryError.invalidValue(field: "id", value: "pe-\(id)", reason: "the feed gives this episode no enclosure to download")
        }
        try checkAddress(episode.url, field: "enclosure")
        guard claim("e\(id)") else { return }
        do {
            try await write { try $0.setPodcastEpisodeStatus(id, .downloading) }
        } catch {
            release("e\(id)")
            throw error
        }
        await enqueue(episode.url) {
            await self.performDownload(id)
            self.release("e\(id)")
        }
    }

    /// Deletes an episode's file (stopping its download); the episode stays listed as `deleted`,
    /// so a refresh does not bring it back.
    public func deleteEpisode(_ id: SavedID) async throws {
        guard let episode = try await library.podcastEpisode(id) else { throw LibraryError.objectNotFound(kind: "podcast episode", id: "pe-\(id)") }
        try await write { try $0.setPodcastEpisodeStatus(id, .deleted) }
        downloads.withLock { $0[id]?.cancel.cancel() }
        if let file = fileURL(episode) { try? FileManager.default.removeItem(at: file) }
    }

    /// Deletes a channel, its episodes and its folder (stopping their downloads).
    public func deleteChannel(_ id: SavedID) async throws {
        try await write { try $0.deletePodcastChannel(id) }
        downloads.withLock { for download in $0.values where download.channel == id { download.cancel.cancel() } }
        try? FileManager.default.removeItem(at: channelFolder(id))
    }

    /// The downloaded file of an episode, when it completed and is still there.
    public func fileURL(_ episode: PodcastEpisode) -> URL? {
        guard episode.status == .completed, let file = episode.file else { return nil }
        return channelFolder(episode.channel).appendingPathComponent(file)
    }

    /// The channel's fetched picture, when there is one.
    public func imageURL(_ channel: PodcastChannel) -> URL? {
        channel.imageFile.map { channelFolder(channel.id).appendingPathComponent($0) }
    }

    // MARK: Work

    private func performRefresh(_ channel: PodcastChannel) async {
        let limits = limits(maxBytes: settings.maxFeedBytes, timeout: settings.feedTimeoutSeconds)
        let fetched = await fetchData(channel.url, limits: limits)
        let feed: PodcastFeed
        switch fetched {
        case .failure(let error):
            await fail(channel.id, "could not fetch the feed: \(error.message)")
            return
        case .success(let body):
            // Parsed on a thread of its own: a 16 MiB feed is seconds of work the pool's threads must not wait for.
            let data = body.data
            switch await Fetcher.run({ Result { () throws(PodcastFeedError) in try PodcastFeed.parse(data) } }) {
            case .success(let parsed): feed = parsed
            case .failure(let error):
                await fail(channel.id, "could not read the feed: \(error.message)")
                return
            }
        }
        do {
            let added = try await write { try $0.savePodcastFeed(channel.id, feed) }
            log("shelf: podcasts: refreshed pc-\(channel.id) '\(feed.title)': \(feed.items.count) episodes, \(added.count) new")
        } catch {
            await fail(channel.id, "could not save the feed: \(error)")
            return
        }
        if let image = feed.imageURL, image != channel.imageURL || channel.imageFile == nil { await fetchImage(channel.id, image) }
    }

    private func fail(_ id: SavedID, _ message: String) async {
        try? await write { try $0.setPodcastChannelStatus(id, .error, error: message) }
        log("shelf: podcasts: pc-\(id): \(message)")
    }

    /// The channel's picture, kept only when it decodes as JPEG, PNG or WebP; a failure is logged,
    /// the channel keeps its old picture.
    private func fetchImage(_ id: SavedID, _ url: String) async {
        guard (try? checkAddress(url, field: "image")) != nil else { return }
        let limits = limits(maxBytes: settings.maxImageBytes, timeout: settings.feedTimeoutSeconds)
        guard case .success(let body) = await fetchData(url, limits: limits) else {
            log("shelf: podcasts: pc-\(id): could not fetch the picture \(url)")
            return
        }
        guard (try? ImageCodec.dimensions(of: body.data)) != nil else {
            log("shelf: podcasts: pc-\(id): the picture \(url) is not a JPEG, PNG or WebP image")
            return
        }
        let name = "cover." + (ImageCodec.mimeType(of: body.data).split(separator: "/").last.map(String.init) ?? "img")
        do {
            let folder = channelFolder(id)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try body.data.write(to: folder.appendingPathComponent(name), options: .atomic)
            try await write { try $0.setPodcastChannelImage(id, file: name) }
            log("shelf: podcasts: pc-\(id): picture kept (\(body.data.count) bytes)")
        } catch {
            log("shelf: podcasts: pc-\(id): could not keep the picture: \(error)")
        }
    }

    private func performDownload(_ id: SavedID) async {
        guard let episode = try? await library.podcastEpisode(id), episode.status == .downloading else { return }
        let folder = channelFolder(episode.channel)
        let part = partURL(episode)
        let limits = limits(maxBytes: settings.maxEpisodeBytes, timeout: settings.episodeTimeoutSeconds)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            await failEpisode(id, "could not make the folder \(folder.path): \(error.localizedDescription)")
            return
        }
        let fd = open(part.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            await failEpisode(id, "could not write \(part.path): \(String(cString: strerror(errno)))")
            return
        }
        let cancel = Fetcher.Cancel()
        downloads.withLock { $0[id] = (episode.channel, cancel) }
        let url = episode.url
        let outcome = await fetch(cancel) { cancel -> Result<(Int64, String), FetchError> in
            let result = Fetcher.file(url, fd: fd, limits: limits, cancel: cancel)
            if case .success = result, fsync(fd) != 0 {
                return .failure(FetchError(status: 8, message: "could not write the file: \(String(cString: strerror(errno)))"))
            }
            return result
        }
        close(fd)
        downloads.withLock { $0[id] = nil }
        switch outcome {
        case .failure(let error):
            unlink(part.path)
            // A delete stopped it: nothing to record, and the channel's folder goes if the channel did.
            if (try? await library.podcastChannel(episode.channel)) == nil { try? FileManager.default.removeItem(at: folder) }
            await failEpisode(id, "could not download \(url): \(error.message)")
        case .success(let (bytes, type)):
            let name = "\(episode.id.rawValue).\(Self.suffix(url: url, mimeType: episode.mimeType ?? type))"
            let final = folder.appendingPathComponent(name)
            let audio = await Fetcher.run { Library.probeAudio(at: part.path) }
            guard let audio else {
                unlink(part.path)
                await failEpisode(id, "the download from \(url) is not audio that TagLib or ffprobe can read")
                return
            }
            guard rename(part.path, final.path) == 0 else {
                unlink(part.path)
                await failEpisode(id, "could not keep the file \(final.path): \(String(cString: strerror(errno)))")
                return
            }
            do {
                try await write { try $0.completePodcastEpisode(id, file: name, size: bytes, audio: audio) }
                log("shelf: podcasts: downloaded pe-\(id) (\(bytes) bytes)")
            } catch {
                // Deleted meanwhile (the episode or its channel): nothing may keep the file.
                unlink(final.path)
            }
        }
    }

    /// Records a failed download, unless the episode left `downloading` meanwhile (deleted).
    private func failEpisode(_ id: SavedID, _ message: String) async {
        try? await write { try $0.setPodcastEpisodeStatus(id, .error, error: message, ifStatus: .downloading) }
        log("shelf: podcasts: pe-\(id): \(message)")
    }

    // MARK: Helpers

    private func write<T: Sendable>(_ body: @escaping @LibraryActor @Sendable (WriteBatch) throws -> T) async throws -> T {
        let result = try await library.write(body)
        changed()
        return result
    }

    /// Runs `job` after the last job queued for the same host.
    private func enqueue(_ url: String, _ job: @escaping @Sendable () async -> Void) async {
        let host = URL(string: url)?.host?.lowercased() ?? url
        hosts.withLock { tails in
            let previous = tails[host]
            tails[host] = Task {
                await previous?.value
                await job()
            }
        }
    }

    private func fetchData(_ url: String, limits: FetchLimits) async -> Result<Fetcher.Body, FetchError> {
        await fetch(Fetcher.Cancel()) { Fetcher.data(url, limits: limits, cancel: $0) }
    }

    /// Runs one blocking fetch on a thread of its own once one of the slots is free; `stop()`
    /// cancels it through `cancel` (as a delete does for a download).
    private func fetch<T: Sendable>(_ cancel: Fetcher.Cancel, _ body: @escaping @Sendable (Fetcher.Cancel) -> T) async -> T {
        let key = ObjectIdentifier(cancel)
        running.withLock { $0[key] = cancel }
        defer { running.withLock { $0[key] = nil } }
        await slots.acquire()
        let result = await Fetcher.run { body(cancel) }
        await slots.release()
        return result
    }

    private func limits(maxBytes: Int64, timeout: Int) -> FetchLimits {
        var limits = FetchLimits(maxBytes: maxBytes)
        limits.maxRedirects = settings.maxRedirects
        limits.timeoutSeconds = timeout
        limits.allowPrivate = settings.allowPrivate
        return limits
    }

    /// An `http`/`https` URL, and not a literal private address unless allowed.
    private func checkAddress(_ url: String, field: String) throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = parsed.host, !host.isEmpty
        else {
            throw LibraryError.invalidValue(field: field, value: url, reason: "podcasts are fetched from http and https URLs only")
        }
        if !settings.allowPrivate, Fetcher.isPrivateLiteral(host) {
            throw LibraryError.invalidValue(
                field: field, value: url,
                reason: "a private, loopback or link-local address is refused (shelf serve --podcast-allow-private allows it)")
        }
    }

    private func channelFolder(_ id: SavedID) -> URL { settings.folder.appendingPathComponent(String(id.rawValue), isDirectory: true) }

    private func partURL(_ episode: PodcastEpisode) -> URL {
        channelFolder(episode.channel).appendingPathComponent(".\(episode.id.rawValue).part")
    }

    /// The file's extension: the URL's when it names an audio format, else the declared type's, else mp3.
    static func suffix(url: String, mimeType: String) -> String {
        let audio: Set<String> = ["mp3", "m4a", "m4b", "aac", "ogg", "oga", "opus", "flac", "wav", "mp4"]
        let path = URL(string: url)?.path ?? ""
        let fromPath = StreamResponder.fileSuffix(path)
        if audio.contains(fromPath) { return fromPath }
        switch mimeType.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) ?? "" {
        case "audio/mp4", "audio/x-m4a", "audio/m4a": return "m4a"
        case "audio/aac", "audio/aacp": return "aac"
        case "audio/ogg", "application/ogg": return "ogg"
        case "audio/opus": return "opus"
        case "audio/flac", "audio/x-flac": return "flac"
        case "audio/wav", "audio/x-wav", "audio/wave": return "wav"
        default: return "mp3"
        }
    }
}
