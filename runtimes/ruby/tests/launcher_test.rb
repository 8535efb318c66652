# frozen_string_literal: true

require 'open3'
require_relative 'support'

# The launcher protocol (runtimes/README.md): usage errors, the URL lines, the
# warm-up, the separate metrics listener, and SIGTERM even mid-request.
class LauncherTest < Minitest::Test
  include Support
  include TargetHelpers

  START = File.join(Support::ROOT, 'start')

  def test_bad_flags_are_one_line_and_exit_2
    [
      [%w[], 'missing --model'],
      [%w[--model nope], "unknown model 'nope'"],
      [%w[--model sequential --threads 4], "--threads does not apply to model 'sequential'"],
      [%w[--model pool --workers 2], '--workers does not apply to any model'],
      [%w[--model prefork --processes 0], '--processes must be a whole number >= 1'],
      [%w[--model pool --port 70000], '--port must be at most 65535'],
      [%w[--model pool --bogus 1], "unknown flag '--bogus'"],
      [%w[--model pool --mc nohost], "--mc 'nohost' is not HOST:PORT"],
      [%w[--model pool --pg mysql://x], "--pg 'mysql://x' is not a PostgreSQL URL"],
      [%w[--model pool --http-backend ftp://x], "--http-backend 'ftp://x' is not an http:// URL"],
      [%w[--model pool --warmup], '--warmup needs a value']
    ].each do |args, message|
      out, err, status = Open3.capture3(START, *args)
      assert_equal 2, status.exitstatus, args.join(' ')
      assert_equal '', out
      assert_equal 1, err.lines.size, err
      assert_includes err, message
    end
  end

  def test_warmup_leaves_zeroed_counters
    with('loop-async', '--warmup', '40') do |t|
      text = get(t.url, '/metrics')[2]
      assert_equal 0, metric(text, 'iolab_requests_completed_total')
      assert_equal 0, metric(text, 'iolab_backend_calls_total{kind="sleep"}')
    end
  end

  def test_metrics_port_answers_while_sequential_is_busy
    with('sequential', '--metrics-port', '0') do |t|
      assert_match %r{\Ahttp://127\.0\.0\.1:\d+\z}, t.metrics_url
      busy = Thread.new { get(t.url, '/work?steps=sleep:2000') }
      sleep 0.3
      _, type, text, ms = get(t.metrics_url, '/metrics')
      assert_operator ms, :<, 1000, 'not behind the blocked reactor'
      assert_equal 'text/plain; version=0.0.4', type
      assert_equal 1, metric(text, 'iolab_requests_in_flight')
      busy.join
    end
  end

  def test_metrics_port_answers_while_loop_async_computes
    with('loop-async', '--metrics-port', '0') do |t|
      terms = cpu_terms_for(2.0)
      busy = Thread.new { get(t.url, "/work?steps=cpu:#{terms}")[3] }
      sleep 0.3
      text = get(t.metrics_url, '/metrics')[2]
      refute_nil busy.alive? && text, 'metrics answered while the cpu step still held the GVL'
      assert_equal 1, metric(text, 'iolab_requests_in_flight')
      busy.join
    end
  end

  def test_metrics_process_answers_while_every_prefork_worker_is_busy
    with('prefork', '--processes', '2', '--metrics-port', '0') do |t|
      busy = Array.new(3) { Thread.new { get(t.url, '/work?steps=sleep:2000') } }
      sleep 0.5
      text, ms = get(t.metrics_url, '/metrics').values_at(2, 3)
      assert_operator ms, :<, 1000
      assert_equal 2, metric(text, 'iolab_requests_in_flight'), 'two workers busy, summed'
      assert_equal 1, metric(text, 'iolab_requests_queued'), 'one waits in the listen queue'
      busy.each(&:join)
      assert_equal 3, children(t.pid).size, 'two workers and the metrics process'
    end
  end

  def test_sigterm_mid_request_stops_within_10_s_with_status_0
    %w[sequential pool loop-async prefork].each do |model|
      t = Support.start(model)
      Thread.new { get(t.url, '/work?steps=sleep:30000') rescue nil }
      sleep 0.3
      started = now
      assert_equal 0, Support.stop(t), model
      assert_operator now - started, :<, 10, model
      assert_empty children(t.pid), "#{model} left processes behind"
    end
  end
end
