import Foundation
import Glibc
import ShelfCore

/// One thing that happened under a watched root, as the kernel told it: the caller debounces and
/// decides (a `.written` file may still be written again, a `.movedOut` may never get its `.movedIn`).
public struct WatchEvent: Sendable, Equatable {
    /// What happened; several inotify events map to one kind because the caller reacts the same way.
    public enum Kind: Sendable, Equatable {
        /// A file was closed after writing (IN_CLOSE_WRITE) or its attributes or mtime changed
        /// (IN_ATTRIB), or it was already inside a folder that just appeared.
        case written
        /// A file was created and may still be open: lets the caller start waiting for it to settle
        /// (a hard link or a fifo gets only this, never a `.written`).
        case created
        /// A file or folder was deleted (IN_DELETE), or a root was (IN_DELETE_SELF, then `.rootGone`),
        /// or a disk mounted on a folder inside a root was unmounted (IN_UNMOUNT).
        case removed
        /// Renamed away (IN_MOVED_FROM): `cookie` pairs it with the `.movedIn` of the same rename,
        /// which is missing when the new name is outside the roots.
        case movedOut
        /// Renamed in (IN_MOVED_TO): `cookie` pairs it with a `.movedOut`, which is missing when the
        /// old name was outside the roots.
        case movedIn
        /// A folder is now watched that was not (created, or moved in without its `.movedOut` in the
        /// same read): its files already inside follow as `.written`, since no event covered them.
        case folderAdded
        /// The kernel dropped events (IN_Q_OVERFLOW): the watches were re-walked before this was
        /// delivered, and the caller must rescan, since any change may have gone unseen.
        case overflow
        /// A root was deleted, moved or unmounted: nothing under it is watched any more.
        case rootGone
    }

    /// What happened.
    public var kind: Kind
    /// The absolute path, under the root as it was given; empty for `.overflow`.
    public var path: String
    /// Whether the entry is a folder (IN_ISDIR), so a removal or a move can be applied to a subtree.
    public var isFolder: Bool
    /// The kernel's rename cookie for `.movedOut` and `.movedIn`, 0 for every other kind.
    public var cookie: UInt32

    /// An event; `isFolder` and `cookie` default to what most events carry.
    public init(kind: Kind, path: String, isFolder: Bool = false, cookie: UInt32 = 0) {
        self.kind = kind
        self.path = path
        self.isFolder = isFolder
        self.cookie = cookie
    }
}

/// What the watches cover: a watcher that hit the watch limit sees nothing in the folders it could
/// not watch, so the caller must know to rescan them (or raise the limit).
public struct WatchCoverage: Sendable, Equatable {
    /// Folders with a watch now.
    public var watchedFolders: Int
    /// The first 100 folders that could not be watched (the limit, EACCES, …), for a message.
    public var unwatchedFolders: [String]
    /// All folders that could not be watched since the last full walk, listed or not.
    public var unwatchedCount: Int
    /// `fs.inotify.max_user_watches` when readable (or the user namespace's lower limit): the limit
    /// is per user, shared by every process of that user.
    public var limit: Int?
    /// When the limit was hit: the watches other inotify users held then, plus every folder found,
    /// plus a quarter for growth; a value to suggest for `max_user_watches`.
    public var needed: Int?
    /// Events and folder entries skipped because their name is not UTF-8, which a `String` path
    /// cannot name exactly (a folder so named is also counted unwatched).
    public var skippedNames: Int

    /// A coverage; everything but the watched count defaults to "nothing missing".
    public init(
        watchedFolders: Int, unwatchedFolders: [String] = [], unwatchedCount: Int = 0, limit: Int? = nil,
        needed: Int? = nil, skippedNames: Int = 0
    ) {
        self.watchedFolders = watchedFolders
        self.unwatchedFolders = unwatchedFolders
        self.unwatchedCount = unwatchedCount
        self.limit = limit
        self.needed = needed
        self.skippedNames = skippedNames
    }
}

/// Why a watcher could not be made: the kernel refused an inotify instance or its wake-up socket.
public struct WatchError: ClassifiedError, Equatable {
    /// The system refused a watch: a limit of the machine, not of the request.
    public var kind: ErrorKind { .internal }
    /// "watchFailed".
    public var errorCode: String { "watchFailed" }
    /// The call that failed.
    public var operation: String
    /// Its errno (EMFILE: `fs.inotify.max_user_instances` reached, or out of descriptors).
    public var code: Int32
    /// The call and the system's message for its errno.
    public var description: String { "\(operation) failed: \(String(cString: strerror(code)))" }
}

/// Watches every folder under some roots with Linux inotify, one watch per folder, and hands what
/// happened to `handler` in batches on its own thread.
///
/// Hidden folders (a name starting with ".") and symbolic links to folders are never watched, like
/// the scanner skips them; events about any name in a watched folder are reported, the caller
/// filters. Call `stop()` when done: the reader thread keeps the watcher alive until then.
public final class DirectoryWatcher: Sendable {
    /// Called on the reader thread, outside the lock, so it may call `coverage` or `stop()`.
    private let handler: @Sendable ([WatchEvent]) -> Void
    /// Everything the reader thread and the callers share. `Locked`, not `Mutex`: see ShelfCore's
    /// `Locked` (ThreadSanitizer does not see the futex behind `Mutex`).
    private let state: Locked<WatcherState>
    /// Entered when the reader thread starts and left when it has closed the descriptors, so
    /// `stop()` can wait for the last handler call to return.
    private let finished = DispatchGroup()

    /// A watcher for `roots` (folders; a root may be a symbolic link to one). Nothing is watched
    /// until `start()`. Throws when the kernel gives no inotify instance.
    public init(roots: [String], handler: @escaping @Sendable ([WatchEvent]) -> Void) throws(WatchError) {
        self.handler = handler
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw WatchError(operation: "inotify_init1", code: errno) }
        // A socket pair, not eventfd or pipe2: Glibc's module exports neither, and SOCK_CLOEXEC sets
        // close-on-exec atomically, which matters in a process that spawns ffmpeg.
        var pair: [Int32] = [-1, -1]
        let flags = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, flags, 0, &pair) == 0 else {
            let code = errno
            close(fd)
            throw WatchError(operation: "socketpair", code: code)
        }
        state = Locked(WatcherState(table: WatchTable(fd: fd, roots: roots.map(Self.standardized)), wakeRead: pair[0], wakeWrite: pair[1]))
    }

    /// Closes what `stop()` did not.
    deinit {
        // Reached only when the reader thread never ran or has ended (it holds `self`), so nothing
        // else can be using the descriptors.
        state.withLock { $0.closeDescriptors() }
    }

    /// Watches every folder under the roots, then starts the reader thread; returns what could be
    /// watched. Only the first call does anything, and none after `stop()`.
    public func start() -> WatchCoverage {
        let begin = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.table.watchRoots()
            state.phase = .running
            // Entered under the lock, so a `stop()` right after this waits for the thread.
            finished.enter()
            return true
        }
        if begin {
            let thread = Thread { [self] in run() }
            thread.name = "DirectoryWatcher"
            thread.start()
        }
        return coverage
    }

    /// Stops the reader thread and closes the descriptors, which drops every watch. When it returns
    /// the handler is not running and will not be called again (called from the handler, the
    /// handler's return is the end). Safe to call more than once, and from any thread.
    public func stop() {
        let mustWait = state.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                state.closeDescriptors()
                return false
            case .running:
                state.phase = .stopped
                var byte: UInt8 = 1
                _ = write(state.wakeWrite, &byte, 1)
                return !(state.reader.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
            case .stopped:
                // A second caller waits too: the first may still be waiting for the thread.
                return state.descriptorsOpen && !(state.reader.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
            }
        }
        if mustWait { finished.wait() }
    }

    /// What is watched now; changes as folders come and go, and after an overflow's re-walk.
    public var coverage: WatchCoverage {
        state.withLock { $0.table.coverage }
    }

    /// The reader thread: blocks in poll() on the inotify descriptor and the wake-up socket, so it
    /// costs nothing while the disk is quiet and ends as soon as `stop()` writes to the socket.
    private func run() {
        let capacity = 4096 * 8
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        // The descriptors stay open while this thread runs: only this thread closes them once started.
        let (fd, wake) = state.withLock { state -> (Int32, Int32) in
            state.reader = pthread_self()
            return (state.table.fd, state.wakeRead)
        }
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if fds[1].revents != 0 { break }
            if fds[0].revents & Int16(POLLNVAL | POLLERR) != 0 { break }
            if fds[0].revents == 0 { continue }
            let count = read(fd, buffer, capacity)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                break
            }
            let events = state.withLock { state -> [WatchEvent]? in
                guard state.phase == .running else { return nil }
                return state.table.process(UnsafeRawBufferPointer(start: buffer, count: count))
            }
            guard let events else { break }
            if !events.isEmpty { handler(events) }
        }
        state.withLock { state in
            state.phase = .stopped
            state.closeDescriptors()
        }
        finished.leave()
    }

    /// A root without its trailing slashes, so reported paths start the way the caller's do and
    /// joining a name never doubles one ("/" stays "/").
    private static func standardized(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}

/// The watcher's shared state, reached only under its lock.
private struct WatcherState {
    /// Where the watcher is in its one life: a stopped watcher is not started again, because its
    /// descriptor is closed.
    enum Phase {
        /// Made, not started: nothing is watched yet.
        case idle
        /// The reader thread runs.
        case running
        /// Stopped, or the reader thread ended: the descriptors are closed or about to be.
        case stopped
    }

    /// The watches and the walking and event logic.
    var table: WatchTable
    /// The end of the socket pair the reader thread polls.
    var wakeRead: Int32
    /// The end `stop()` writes one byte to.
    var wakeWrite: Int32
    /// Where the watcher is.
    var phase = Phase.idle
    /// The reader thread, so `stop()` called from the handler does not wait for itself.
    var reader: pthread_t?
    /// Whether the descriptors are still open: closed exactly once, since a closed number may
    /// already belong to another file.
    var descriptorsOpen = true

    /// Creates the state around an open inotify descriptor and socket pair.
    init(table: WatchTable, wakeRead: Int32, wakeWrite: Int32) {
        self.table = table
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
    }

    /// Closes the inotify descriptor (the kernel drops every watch with it) and the socket pair.
    mutating func closeDescriptors() {
        guard descriptorsOpen else { return }
        descriptorsOpen = false
        close(table.fd)
        close(wakeRead)
        close(wakeWrite)
        table.forgetAll()
    }
}

/// The watches: a map from watch descriptor to folder, kept as a tree (parent descriptor and one
/// name each) so 40,000 folders cost a few MiB and a moved folder is re-parented in one step.
private struct WatchTable {
    /// One watched folder. Children are a doubly linked list through their descriptors, so
    /// unlinking one costs O(1) even in a folder with thousands of subfolders.
    struct Node {
        /// The parent folder's descriptor, `rootParent` for a root, `detached` while moved away.
        var parent: Int32
        /// The first subfolder, or `none`.
        var firstChild: Int32 = WatchTable.none
        /// The previous sibling, or `none`.
        var previous: Int32 = WatchTable.none
        /// The next sibling, or `none`.
        var next: Int32 = WatchTable.none
        /// The walk that last reached it: stops a walk looping through a bind mount, and lets the
        /// overflow re-walk drop what it no longer finds.
        var mark: UInt32
        /// The folder's name in its parent; the whole path for a root.
        var name: String
    }

    /// "No node": inotify descriptors start at 1.
    static let none: Int32 = 0
    /// The parent of a root.
    static let rootParent: Int32 = -1
    /// The parent of a folder moved away and not (yet) moved in again.
    static let detached: Int32 = -2
    /// Most unwatched folders listed by name; the rest are only counted.
    static let listedUnwatched = 100
    /// What every subfolder is watched for. IN_DONT_FOLLOW: a symbolic link is never watched as the
    /// folder it points to. IN_EXCL_UNLINK: no events from files already unlinked but still open.
    static let folderMask = UInt32(
        IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF
            | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK | IN_DONT_FOLLOW)
    /// A root may be a symbolic link to a folder (a music folder on another disk), so it is followed.
    static let rootMask = folderMask & ~UInt32(IN_DONT_FOLLOW)

    /// The inotify descriptor.
    let fd: Int32
    /// The roots, as the walks start from them.
    let roots: [String]
    /// Every watched folder by descriptor.
    private var nodes: [Int32: Node] = [:]
    /// The current walk's number, for `Node.mark`.
    private var generation: UInt32 = 0
    /// The first unwatched folders.
    private var unwatched: [String] = []
    /// All unwatched folders.
    private var unwatchedCount = 0
    /// The watch limit, read at the start and whenever the limit is hit.
    private var limit: Int?
    /// The watches other inotify users held when the limit was last hit.
    private var othersWhenFull: Int?
    /// Events and entries skipped because their name is not UTF-8.
    private var skippedNames = 0
    /// Whether the walk in progress hit the limit: it then only counts, since every further
    /// inotify_add_watch would fail too.
    private var full = false
    /// Whether a walk keeps calling inotify_add_watch after the limit: the overflow re-walk must, as
    /// it re-finds folders already watched (which costs no new watch) and drops those it misses.
    private var rewalking = false

    /// A table for `fd` with nothing watched.
    init(fd: Int32, roots: [String]) {
        self.fd = fd
        self.roots = roots
    }

    /// What is watched, and what could not be.
    var coverage: WatchCoverage {
        let needed = othersWhenFull.map { others -> Int in
            let folders = nodes.count + unwatchedCount
            return others + folders + folders / 4
        }
        return WatchCoverage(
            watchedFolders: nodes.count, unwatchedFolders: unwatched, unwatchedCount: unwatchedCount, limit: limit,
            needed: needed, skippedNames: skippedNames)
    }

    /// Forgets every watch once the descriptor is closed (the kernel has dropped them).
    mutating func forgetAll() {
        nodes = [:]
    }

    // MARK: Walking

    /// Watches every folder under every root, as one walk (the limit, once hit, stays hit for the
    /// rest), and starts the coverage afresh.
    mutating func watchRoots() {
        unwatched = []
        unwatchedCount = 0
        othersWhenFull = nil
        limit = Self.readLimit()
        generation &+= 1
        full = false
        var ignored: [WatchEvent] = []
        for root in roots {
            walk(from: root, parent: Self.rootParent, name: root, report: false, replacing: false, events: &ignored)
        }
    }

    /// After an overflow: the events that would have said which folders appeared, moved or went are
    /// lost, so every root is walked again (inotify_add_watch returns the descriptor a folder
    /// already has, and a moved one is re-parented), and watches the walk did not reach are removed.
    mutating func rewatchAfterOverflow() {
        rewalking = true
        watchRoots()
        rewalking = false
        let stale = nodes.filter { $0.value.mark != generation }.map(\.key)
        for wd in stale where nodes[wd] != nil {
            removeSubtree(wd, unwatchTop: true)
        }
    }

    /// Watches a folder that appeared under `parent` and everything under it, and reports each
    /// folder newly watched as `.folderAdded` and each file inside as `.written` (it may have been
    /// copied in before the watch existed, so no event would ever name it).
    mutating func watchNewFolder(_ path: String, parent: Int32, name: String, events: inout [WatchEvent]) {
        generation &+= 1
        full = false
        walk(from: path, parent: parent, name: name, report: true, replacing: true, events: &events)
    }

    /// Walks one tree depth first with an explicit stack (no recursion limit), watching each folder
    /// before listing it, so an entry made between the two is seen either by the listing or by an
    /// event. `replacing`: the top folder takes the place of any watched folder of the same name
    /// (a folder renamed over an empty one leaves the old one's watch until its IN_IGNORED).
    private mutating func walk(
        from top: String, parent topParent: Int32, name topName: String, report: Bool, replacing: Bool,
        events: inout [WatchEvent]
    ) {
        // `parent` nil: the folder is only counted (its parent has no watch to hang it from).
        var stack: [(path: String, parent: Int32?, name: String)] = [(top, topParent, topName)]
        var isTop = true
        while let (path, parent, name) = stack.popLast() {
            let first = isTop
            isTop = false
            var wd: Int32 = Self.none
            if let parent {
                let mask = parent == Self.rootParent ? Self.rootMask : Self.folderMask
                switch watch(path, mask: mask) {
                case .watched(let descriptor):
                    guard attach(descriptor, parent: parent, name: name, replacing: replacing && first) else { continue }
                    wd = descriptor
                    if report { events.append(WatchEvent(kind: .folderAdded, path: path, isFolder: true)) }
                case .gone:
                    // A missing root is worth telling; a subfolder that vanished mid-walk is not.
                    if parent == Self.rootParent { recordUnwatched(path) }
                    continue
                case .refused:
                    recordUnwatched(path)
                }
            } else {
                recordUnwatched(path)
            }
            list(path, files: report) { entry, isFolder in
                if isFolder {
                    stack.append((Self.join(path, entry), wd == Self.none ? nil : wd, entry))
                } else if report {
                    events.append(WatchEvent(kind: .written, path: Self.join(path, entry)))
                }
            }
        }
    }

    /// What inotify_add_watch said.
    private enum WatchResult {
        /// Watched (possibly already, under this descriptor).
        case watched(Int32)
        /// The folder is no longer there (or is no longer a folder): nothing to watch or count.
        case gone
        /// Not watched: the limit, permissions, memory.
        case refused
    }

    /// Adds a watch unless the limit was hit earlier in this walk.
    private mutating func watch(_ path: String, mask: UInt32) -> WatchResult {
        if full && !rewalking { return .refused }
        let wd = inotify_add_watch(fd, path, mask)
        if wd >= 0 { return .watched(wd) }
        switch errno {
        case ENOENT, ENOTDIR, ELOOP:
            return .gone
        case ENOSPC:
            // The limit counts every watch of this user, so what is not ours belongs to others.
            full = true
            limit = Self.readLimit() ?? limit
            if let limit { othersWhenFull = max(0, limit - nodes.count) }
            return .refused
        default:
            return .refused
        }
    }

    /// Counts a folder that has no watch, and names it if the list is not full.
    private mutating func recordUnwatched(_ path: String) {
        unwatchedCount += 1
        if unwatched.count < Self.listedUnwatched { unwatched.append(path) }
    }

    /// Calls `body` with each visible entry of a folder (no hidden names, no symbolic links to
    /// folders) and whether it is a folder; with `files` false only with folders, so the first walk
    /// of a large library makes no string per file. An unreadable folder lists nothing.
    private mutating func list(_ path: String, files: Bool, _ body: (String, Bool) -> Void) {
        guard let dir = opendir(path) else { return }
        defer { closedir(dir) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(dir) {
            let raw = UnsafeRawPointer(entry).advanced(by: nameOffset)
            let length = strlen(raw.assumingMemoryBound(to: CChar.self))
            let bytes = UnsafeRawBufferPointer(start: raw, count: length)
            // Also skips "." and "..".
            guard let first = bytes.first, first != UInt8(ascii: ".") else { continue }
            var type = entry.pointee.d_type
            if !files && type != UInt8(DT_DIR) && type != UInt8(DT_UNKNOWN) { continue }
            guard let name = String(validating: bytes, as: UTF8.self) else {
                skippedNames += 1
                if type == UInt8(DT_DIR) { unwatchedCount += 1 }
                continue
            }
            let entryPath = Self.join(path, name)
            if type == UInt8(DT_UNKNOWN) {
                // Some filesystems (older XFS, some FUSE) do not fill d_type.
                var info = stat()
                guard lstat(entryPath, &info) == 0 else { continue }
                type = Self.direntType(info.st_mode)
            }
            switch type {
            case UInt8(DT_DIR):
                body(name, true)
            case UInt8(DT_REG) where files:
                body(name, false)
            case UInt8(DT_LNK) where files:
                // A link to a file is a file to the scanner; a link to a folder is not followed.
                var info = stat()
                if stat(entryPath, &info) == 0, info.st_mode & S_IFMT == S_IFREG { body(name, false) }
            default:
                continue
            }
        }
    }

    /// The d_type for an lstat mode.
    private static func direntType(_ mode: mode_t) -> UInt8 {
        switch mode & S_IFMT {
        case S_IFDIR: UInt8(DT_DIR)
        case S_IFREG: UInt8(DT_REG)
        case S_IFLNK: UInt8(DT_LNK)
        default: UInt8(DT_UNKNOWN)
        }
    }

    // MARK: The tree

    /// Records `wd` as the folder `name` under `parent`. A descriptor already known is the same
    /// folder reached again: re-parented if it moved, but refused when this walk already reached it
    /// or when it would become its own ancestor (a bind mount loop), so the tree stays a tree.
    private mutating func attach(_ wd: Int32, parent: Int32, name: String, replacing: Bool) -> Bool {
        if replacing, parent > 0, let other = child(of: parent, named: name), other != wd {
            removeSubtree(other, unwatchTop: true)
        }
        if let node = nodes[wd] {
            if node.mark == generation { return false }
            if node.parent != parent || node.name != name {
                if parent > 0 && isAncestor(wd, of: parent) { return false }
                unlink(wd)
                nodes[wd]?.parent = parent
                nodes[wd]?.name = name
                link(wd, under: parent)
            }
            nodes[wd]?.mark = generation
            return true
        }
        nodes[wd] = Node(parent: parent, mark: generation, name: name)
        link(wd, under: parent)
        return true
    }

    /// Puts `wd` first in its parent's list of subfolders (roots and detached folders have none).
    private mutating func link(_ wd: Int32, under parent: Int32) {
        guard parent > 0, let head = nodes[parent]?.firstChild else { return }
        nodes[wd]?.previous = Self.none
        nodes[wd]?.next = head
        if head != Self.none { nodes[head]?.previous = wd }
        nodes[parent]?.firstChild = wd
    }

    /// Takes `wd` out of its parent's list of subfolders.
    private mutating func unlink(_ wd: Int32) {
        guard let node = nodes[wd] else { return }
        if node.previous != Self.none {
            nodes[node.previous]?.next = node.next
        } else if node.parent > 0, nodes[node.parent]?.firstChild == wd {
            nodes[node.parent]?.firstChild = node.next
        }
        if node.next != Self.none { nodes[node.next]?.previous = node.previous }
        nodes[wd]?.previous = Self.none
        nodes[wd]?.next = Self.none
    }

    /// The watched subfolder of `parent` called `name`.
    private func child(of parent: Int32, named name: String) -> Int32? {
        var wd = nodes[parent]?.firstChild ?? Self.none
        while wd != Self.none, let node = nodes[wd] {
            if node.name == name { return wd }
            wd = node.next
        }
        return nil
    }

    /// Whether `ancestor` is `wd` or above it.
    private func isAncestor(_ ancestor: Int32, of wd: Int32) -> Bool {
        var current = wd
        while current > 0 {
            if current == ancestor { return true }
            current = nodes[current]?.parent ?? Self.none
        }
        return false
    }

    /// Forgets a folder and every folder under it, removing their watches: their paths are no longer
    /// what the tree says. `unwatchTop` false when the kernel already removed the top one (IN_IGNORED).
    mutating func removeSubtree(_ top: Int32, unwatchTop: Bool) {
        unlink(top)
        var stack = [top]
        while let wd = stack.popLast() {
            guard let node = nodes.removeValue(forKey: wd) else { continue }
            var child = node.firstChild
            while child != Self.none {
                stack.append(child)
                child = nodes[child]?.next ?? Self.none
            }
            // Its IN_IGNORED comes later and finds nothing, which is fine.
            if wd != top || unwatchTop { inotify_rm_watch(fd, wd) }
        }
    }

    /// The folder's absolute path, or nil when it hangs under a folder moved away.
    private func path(of wd: Int32) -> String? {
        var names: [String] = []
        var current = wd
        // Bounded, so that a bug that linked a loop would lose an event rather than hang the thread.
        while names.count < 4096, let node = nodes[current] {
            if node.parent == Self.rootParent {
                return names.reversed().reduce(node.name) { Self.join($0, $1) }
            }
            if node.parent == Self.detached { return nil }
            names.append(node.name)
            current = node.parent
        }
        return nil
    }

    /// `folder/name`, without doubling the slash of "/".
    private static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// The watch limit, or nil when /proc cannot tell: the smaller of `fs.inotify.max_user_watches`
    /// (the host's) and `user.max_inotify_watches` (this user namespace's, lower in a container).
    private static func readLimit() -> Int? {
        let files = ["/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"]
        return files.compactMap { file -> Int? in
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
            return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }.min()
    }

    // MARK: Events

    /// Turns what one read() returned into events, updating the watches as folders come and go.
    /// Records are read without assuming alignment and a truncated one ends the batch, so odd input
    /// cannot crash it.
    mutating func process(_ bytes: UnsafeRawBufferPointer) -> [WatchEvent] {
        var events: [WatchEvent] = []
        // Folders moved away in this batch, by cookie: their IN_MOVED_TO usually follows in the same
        // read, and then they keep their watches under the new name.
        var movedAway: [UInt32: Int32] = [:]
        var overflowed = false
        let header = MemoryLayout<inotify_event>.size
        var offset = 0
        while offset + header <= bytes.count {
            let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + header
            guard length <= bytes.count - nameStart else { break }
            offset = nameStart + length
            // The name is NUL-padded to the record's length.
            let padded = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<nameStart + length])
            let nameBytes = UnsafeRawBufferPointer(rebasing: padded[..<(padded.firstIndex(of: 0) ?? padded.count)])
            guard let name = String(validating: nameBytes, as: UTF8.self), !name.contains("/") else {
                skippedNames += 1
                continue
            }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                overflowed = true
                continue
            }
            handle(wd: wd, mask: mask, cookie: cookie, name: name, movedAway: &movedAway, events: &events)
        }
        // Moved out of the roots (or its IN_MOVED_TO is in the next read, which then walks it anew).
        for wd in movedAway.values where nodes[wd] != nil {
            removeSubtree(wd, unwatchTop: true)
        }
        if overflowed {
            rewatchAfterOverflow()
            events.append(WatchEvent(kind: .overflow, path: ""))
        }
        return events
    }

    /// One inotify event.
    private mutating func handle(
        wd: Int32, mask: UInt32, cookie: UInt32, name: String, movedAway: inout [UInt32: Int32],
        events: inout [WatchEvent]
    ) {
        if mask & UInt32(IN_IGNORED) != 0 {
            // The kernel dropped the watch (folder deleted, unmounted, or inotify_rm_watch).
            if nodes[wd] != nil { removeSubtree(wd, unwatchTop: false) }
            return
        }
        guard let node = nodes[wd], let folder = path(of: wd) else { return }
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        if name.isEmpty {
            // About the watched folder itself. For a subfolder its parent's events say the same,
            // and its IN_MOVE_SELF arrives after the parent's IN_MOVED_TO has re-parented it; only
            // an unmount has no other event.
            guard node.parent == Self.rootParent else {
                if mask & UInt32(IN_UNMOUNT) != 0 {
                    // A disk mounted inside a root went away, and its files with it; the folder
                    // it was mounted on is watched in its place. Every folder of that disk gets
                    // this event, in no order: a deeper one first is reported and then not found.
                    events.append(WatchEvent(kind: .removed, path: folder, isFolder: true))
                    removeSubtree(wd, unwatchTop: true)
                    if node.parent > 0 { watchNewFolder(folder, parent: node.parent, name: node.name, events: &events) }
                }
                return
            }
            if mask & UInt32(IN_DELETE_SELF) != 0 {
                events.append(WatchEvent(kind: .removed, path: folder, isFolder: true))
                events.append(WatchEvent(kind: .rootGone, path: folder, isFolder: true))
            } else if mask & UInt32(IN_MOVE_SELF | IN_UNMOUNT) != 0 {
                events.append(WatchEvent(kind: .rootGone, path: folder, isFolder: true))
                // A moved root is still watched where it went: those paths are not under the root.
                removeSubtree(wd, unwatchTop: true)
            }
            return
        }
        let path = Self.join(folder, name)
        let hidden = name.utf8.first == UInt8(ascii: ".")
        if mask & UInt32(IN_CREATE) != 0 {
            if !isFolder {
                events.append(WatchEvent(kind: .created, path: path))
            } else if !hidden {
                watchNewFolder(path, parent: wd, name: name, events: &events)
            }
        } else if mask & UInt32(IN_CLOSE_WRITE | IN_ATTRIB) != 0 {
            if !isFolder { events.append(WatchEvent(kind: .written, path: path)) }
        } else if mask & UInt32(IN_DELETE) != 0 {
            events.append(WatchEvent(kind: .removed, path: path, isFolder: isFolder))
            // Removed now rather than at its IN_IGNORED, so a new folder of the same name is not
            // mistaken for it.
            if isFolder, let gone = child(of: wd, named: name) { removeSubtree(gone, unwatchTop: true) }
        } else if mask & UInt32(IN_MOVED_FROM) != 0 {
            events.append(WatchEvent(kind: .movedOut, path: path, isFolder: isFolder, cookie: cookie))
            if isFolder, let moved = child(of: wd, named: name) {
                unlink(moved)
                nodes[moved]?.parent = Self.detached
                if let earlier = movedAway.updateValue(moved, forKey: cookie), earlier != moved, nodes[earlier] != nil {
                    removeSubtree(earlier, unwatchTop: true)
                }
            }
        } else if mask & UInt32(IN_MOVED_TO) != 0 {
            events.append(WatchEvent(kind: .movedIn, path: path, isFolder: isFolder, cookie: cookie))
            guard isFolder else { return }
            let moved = movedAway.removeValue(forKey: cookie)
            if hidden {
                // Not watched: the caller sees it leave through the pair of events.
                if let moved, nodes[moved] != nil { removeSubtree(moved, unwatchTop: true) }
            } else if let moved, nodes[moved] != nil {
                // The watches follow the folder's inode: only its place in the tree changes.
                if let other = child(of: wd, named: name), other != moved { removeSubtree(other, unwatchTop: true) }
                nodes[moved]?.parent = wd
                nodes[moved]?.name = name
                link(moved, under: wd)
            } else {
                watchNewFolder(path, parent: wd, name: name, events: &events)
            }
        }
    }
}
