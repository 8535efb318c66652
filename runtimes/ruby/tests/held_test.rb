# frozen_string_literal: true

require 'json'
require_relative 'support'
require_relative '../lib/iolab/held'

# lib/iolab/held.rb: the /events interval is read as iolab reads durations
# (crates/model units.rs), and an event is the contract's bytes.
class HeldTest < Minitest::Test
  def test_durations_as_iolab_writes_them
    assert_in_delta 0.1, Iolab::Held.duration_s('100ms')
    assert_in_delta 90.0, Iolab::Held.duration_s('1m30s')
    assert_in_delta 120.0, Iolab::Held.duration_s('2min')
    assert_in_delta 0.00025, Iolab::Held.duration_s('250us')
    ['', '100', 'ms', '1x', '1 s', '1mins', '200h'].each { |bad| assert_nil Iolab::Held.duration_s(bad), bad }
    assert_in_delta 0.05, Iolab::Held.every_s('every=50ms')
    assert_in_delta Iolab::Held::MIN_EVERY_S, Iolab::Held.every_s('every=0s')
    assert_in_delta Iolab::Held::EVERY_S, Iolab::Held.every_s(nil)
  end

  def test_an_event_is_numbered_and_stamped_in_microseconds
    text = Iolab::Held.event(7)
    assert text.start_with?("id: 7\ndata: ") && text.end_with?("\n\n")
    data = JSON.parse(text.split('data: ', 2)[1])
    assert_equal 7, data['seq']
    assert_in_delta Time.now.to_f * 1e6, data['sent_unix_us'], 5e6
  end
end
