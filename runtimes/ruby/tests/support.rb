# frozen_string_literal: true

# Helpers for the ruby runtime's tests: start a target through the launcher
# (./start) exactly as iolab does, talk to it over real sockets, time things.
require 'minitest/autorun'
require 'json'
require 'net/http'
require 'tmpdir'
require 'fileutils'

module Support
  ROOT = File.expand_path('..', __dir__)
  VECTORS = File.expand_path('../../vectors', ROOT)
  BACKEND_ENV = { pg: 'IOLAB_PG', mc: 'IOLAB_MC', http: 'IOLAB_HTTP_BACKEND' }.freeze

  Target = Struct.new(:pid, :url, :metrics_url, :dir, :out, :err, keyword_init: true) do
    def port = Integer(url[/\d+\z/])
  end

  module_function

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  # The backends the test environment configures (scripts/services exports them).
  def backends = BACKEND_ENV.select { |_, var| ENV[var].to_s != '' }.keys

  # Start `./start --model M --port 0 FLAGS`; with backends: false the IOLAB_*
  # variables are removed. Waits for the URL line (and the metrics line).
  def start(model, *flags, backends: true)
    dir = Dir.mktmpdir('iolab-ruby-test')
    out = File.join(dir, 'out')
    err = File.join(dir, 'err')
    env = backends ? {} : BACKEND_ENV.values.to_h { |v| [v, nil] }
    pid = Process.spawn(env, File.join(ROOT, 'start'), '--model', model, '--port', '0', *flags,
                        out: out, err: err, pgroup: true)
    want = flags.include?('--metrics-port') ? 2 : 1
    lines = []
    deadline = now + 60
    while (lines = File.readlines(out, chomp: true)).size < want
      raise "#{model} exited before its URL: #{File.read(err)}" if Process.waitpid(pid, Process::WNOHANG)
      if now > deadline
        Process.kill('KILL', -pid)
        Process.wait(pid)
        raise "#{model}: no URL line within 60 s: #{File.read(err)}"
      end

      sleep 0.05
    end
    Target.new(pid: pid, url: lines[0], metrics_url: lines[1]&.delete_prefix('metrics '), dir: dir, out: out, err: err)
  end

  # SIGTERM; the exit status, or nil if it did not end within `limit` seconds
  # (then its process group is killed).
  def stop(target, limit: 10)
    Process.kill('TERM', target.pid)
    deadline = now + limit
    until (done = Process.waitpid2(target.pid, Process::WNOHANG))
      if now > deadline
        Process.kill('KILL', -target.pid)
        Process.waitpid(target.pid)
        return nil
      end
      sleep 0.05
    end
    done[1].exitstatus
  ensure
    FileUtils.rm_rf(target.dir)
  end

  # GET url+path: [status, content type, body, milliseconds].
  def get(base, path, timeout: 30)
    uri = URI.parse(base)
    t = now
    res = Net::HTTP.start(uri.host, uri.port, read_timeout: timeout, open_timeout: 5) do |http|
      http.request(Net::HTTP::Get.new(path))
    end
    [res.code.to_i, res['Content-Type'].to_s, res.body.to_s, (now - t) * 1000]
  end

  # n concurrent GETs of path, each on its own connection: [wall ms, statuses].
  def concurrently(base, n, path)
    t = now
    codes = Array.new(n) { Thread.new { get(base, path)[0] } }.map(&:value)
    [(now - t) * 1000, codes]
  end

  # One metric's value from /metrics text.
  def metric(text, series)
    line = text.lines.find { |l| l.start_with?("#{series} ") } or raise "no #{series} in:\n#{text}"
    line.split.last.to_i
  end

  # Established TCP connections of process pid to 127.0.0.1:port (from /proc).
  def connections_to(pid, port)
    inodes = Dir.glob("/proc/#{pid}/fd/*").filter_map { |f| File.readlink(f)[/\Asocket:\[(\d+)\]\z/, 1] rescue nil }
    File.readlines('/proc/net/tcp').drop(1).count do |line|
      f = line.split
      f[3] == '01' && f[2].split(':')[1].to_i(16) == port && inodes.include?(f[9])
    end
  end

  # Leibniz terms this machine computes in about `seconds` in Ruby.
  def cpu_terms_for(seconds)
    require_relative '../lib/iolab/cpu'
    t = now
    Iolab::Cpu.leibniz(500_000)
    (500_000 * seconds / (now - t)).to_i
  end
end

module Support
  module_function

  # Store value under key in the memcached at addr (text protocol, flags 0, as `iolab backend mc-fill`).
  def mc_set(addr, key, value)
    host, _, port = addr.rpartition(':')
    TCPSocket.open(host, Integer(port)) do |s|
      s.write("set #{key} 0 0 #{value.bytesize}\r\n#{value}\r\n")
      raise "memcached: #{s.gets}" unless s.gets == "STORED\r\n"
    end
  end

  # Pids of the processes whose parent is pid.
  def children(pid)
    Dir.glob('/proc/[0-9]*/stat').filter_map do |f|
      stat = File.read(f) rescue next
      f[%r{/proc/(\d+)/}, 1].to_i if stat[(stat.rindex(')') + 2)..].split[1].to_i == pid
    end
  end

  # A loopback port nothing listens on.
  def closed_port
    s = TCPServer.new('127.0.0.1', 0)
    s.addr[1]
  ensure
    s&.close
  end
end

# Helpers for the test classes (they need Minitest's assertions).
module TargetHelpers
  # Start model with flags, yield it, then SIGTERM it and require exit status 0.
  def with(model, *flags)
    target = Support.start(model, *flags)
    yield target
  ensure
    assert_equal 0, Support.stop(target), "#{model}: exit status after SIGTERM" if target
  end

  # Skip a test whose backend the environment lacks; fail instead under IOLAB_REQUIRE_BACKENDS=1.
  def skip_unless(kind)
    return if Support.backends.include?(kind)
    flunk "backend #{kind} required (IOLAB_REQUIRE_BACKENDS=1)" if ENV['IOLAB_REQUIRE_BACKENDS'] == '1'

    skip "no #{Support::BACKEND_ENV[kind]}"
  end
end
