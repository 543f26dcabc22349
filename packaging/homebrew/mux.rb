# Homebrew formula for mux (packaging/README.md#homebrew). The resources are generated:
# scripts/homebrew-resources rewrites them from packaging/requirements.txt, and
# tests/packaging/test_homebrew.py checks them (and this file's stanzas) against it.
class Mux < Formula
  include Language::Python::Virtualenv

  desc "Per-user terminal session service: PTY panes that outlive terminal windows"
  # PLACEHOLDER: no release of mux exists yet. A release uploads the sdist that
  # `python -m build --sdist` makes (mux-VERSION.tar.gz) and then sets url to it and
  # sha256 to its checksum. Until then the sha256 is all zeros, which no file has:
  # `brew install` stops at the checksum instead of building something unverified.
  # To try the formula before a release, point url at a local sdist (file:///...) and
  # set sha256 to its `sha256sum` (packaging/README.md#homebrew).
  homepage "https://pypi.org/project/mux/"
  url "https://files.pythonhosted.org/packages/source/m/mux/mux-0.1.0.tar.gz"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"
  license "MIT"

  # pyavt (mux's terminal emulator) and pydantic-core are Rust (PyO3) extensions, built
  # from their sdists with maturin; dbus-fast compiles its Cython parts with the C compiler.
  depends_on "rust" => :build
  # cryptography (saved pane contents, sealed) and what it needs, cffi and pycparser,
  # come from Homebrew's own bottled formulae, built against its openssl@3, as in
  # homebrew-core: the virtualenv sees them (system site-packages), and
  # `pypi_packages exclude_packages` leaves them out of the resources.
  depends_on "cryptography" => :no_linkage
  # muxd starts its own dbus-daemon when there is no session bus: always on macOS.
  depends_on "dbus"
  depends_on "python@3.13"

  # What `brew update-python-resources` (and scripts/homebrew-resources) leave out:
  # this package and its dependency tree.
  pypi_packages exclude_packages: "cryptography"

  # BEGIN resources (generated: scripts/homebrew-resources)
  # sys_platform == "linux" in requirements.txt
  on_linux do
    resource "pyroute2" do
      url "https://files.pythonhosted.org/packages/1b/2a/d295013eb67b5bb3a0ebff7c6ae3f635a8f55929b3f5367889ddadd7f4dd/pyroute2-0.9.7.tar.gz"
      sha256 "a678b098478c46ec51d6bf9a03c3cd2ac0172dffa590e9e8c1eeab633d0c17c6"
    end
  end

  resource "aiohappyeyeballs" do
    url "https://files.pythonhosted.org/packages/ce/f4/eec0465c2f67b2664688d0240b3212d5196fd89e741df67ddb81f8d35658/aiohappyeyeballs-2.7.1.tar.gz"
    sha256 "065665c041c42a5938ed220bdcd7230f22527fbec085e1853d2402c8a3615d9d"
  end

  resource "aiohttp" do
    url "https://files.pythonhosted.org/packages/6c/4c/bdccd81e9ee225b69c60e7766c9a5b05364f118f4d383713b89a682d772d/aiohttp-3.14.5.tar.gz"
    sha256 "5558a7f5a05af9ecf744af91e5baefc436f93c9333e656c27ec253f9a6bbe178"
  end

  resource "aiosignal" do
    url "https://files.pythonhosted.org/packages/61/62/06741b579156360248d1ec624842ad0edf697050bbaf7c3e46394e106ad1/aiosignal-1.4.0.tar.gz"
    sha256 "f47eecd9468083c2029cc99945502cb7708b082c232f9aca65da147157b251c7"
  end

  resource "annotated-types" do
    url "https://files.pythonhosted.org/packages/5f/56/a8120250d128bed162cd73c76d45f6ef9991f3e068f62a8ee060afa3104a/annotated_types-0.8.0.tar.gz"
    sha256 "13b2beaad985e05e2d6407ee4c4f35590b11f8d693a258a561055cac8f64cab7"
  end

  resource "attrs" do
    url "https://files.pythonhosted.org/packages/9a/8e/82a0fe20a541c03148528be8cac2408564a6c9a0cc7e9171802bc1d26985/attrs-26.1.0.tar.gz"
    sha256 "d03ceb89cb322a8fd706d4fb91940737b6642aa36998fe130a9bc96c985eff32"
  end

  resource "dbus-fast" do
    url "https://files.pythonhosted.org/packages/4c/5b/ce64b8788c10a8bd313c8638b28be5dccdd5c2daf14839f23aff37e0b39d/dbus_fast-5.2.0.tar.gz"
    sha256 "a4a5dddc04b1ade5eb7650d791e2f6fb7c1334595593473914e78a2526ecddda"
  end

  resource "frozenlist" do
    url "https://files.pythonhosted.org/packages/2d/f5/c831fac6cc817d26fd54c7eaccd04ef7e0288806943f7cc5bbf69f3ac1f0/frozenlist-1.8.0.tar.gz"
    sha256 "3ede829ed8d842f6cd48fc7081d7a41001a56f1f38603f9d49bf3020d59a31ad"
  end

  resource "idna" do
    url "https://files.pythonhosted.org/packages/f5/08/8eea9d4b8302028f3abb2c0813953f7aec26d33b7a8960ed760e65ff29fa/idna-3.20.tar.gz"
    sha256 "a7db850025b95ded1eae8a46181a1a6c56c92c96f0e2b005d9ff8dc0210cab44"
  end

  resource "jeepney" do
    url "https://files.pythonhosted.org/packages/7b/6f/357efd7602486741aa73ffc0617fb310a29b588ed0fd69c2399acbb85b0c/jeepney-0.9.0.tar.gz"
    sha256 "cf0e9e845622b81e4a28df94c40345400256ec608d0e55bb8a3feaa9163f5732"
  end

  resource "multidict" do
    url "https://files.pythonhosted.org/packages/7b/6b/29ef8e752f5854dcc267ded0652c475bec99b86f255957a0d4fcad657b18/multidict-7.2.1.tar.gz"
    sha256 "e8af3e6f1bdbc31fd762b094133b478b89988eaebc63cbe82b1d9e3bbd15cede"
  end

  resource "propcache" do
    url "https://files.pythonhosted.org/packages/b3/9a/9fbf4e4ec0c2d7f1c32519fff782ef467859b8faa9fbc5331a96f6395d43/propcache-0.5.4.tar.gz"
    sha256 "ff6b113f50bc066a698db5d944d2c6dc7507168dd3341e255a8892fd0715a558"
  end

  resource "pyavt" do
    url "https://files.pythonhosted.org/packages/9d/ff/53db3fc460155772d2e4f2c4903739757cb2671f5946a87392472f49b8b1/pyavt-0.1.2.tar.gz"
    sha256 "4de005f0d9381bc5549f91e2ab374ffb5b67d6cb9fd992a7cf643b2538cf746e"
  end

  resource "pydantic" do
    url "https://files.pythonhosted.org/packages/8e/25/3ec212432a6031b65f043eaca9c820ddf87c0d0aa330023e64f79fcb5db6/pydantic-2.14.4.tar.gz"
    sha256 "7c19f1d46f8accf55a4617a6116e1ade64840870f397b846a2c53fb9019414ba"
  end

  resource "pydantic-core" do
    url "https://files.pythonhosted.org/packages/fb/63/0ceb815a7762576027ce388544c573d440574f95afb1302a2496b96db548/pydantic_core-2.50.5.tar.gz"
    sha256 "1e740886083ff95530d694e6a3f09ed914bcf92a496d16acd307c6c3484fc36d"
  end

  resource "pydantic-settings" do
    url "https://files.pythonhosted.org/packages/59/28/227c843eedd29bd78e132e5aafa420d83154b10465c312f9c21ff2eaf77d/pydantic_settings-2.16.3.tar.gz"
    sha256 "10e36f616623ebb586c05ca3d3cd22927146869db413d4f14c20c514442a1337"
  end

  resource "python-dotenv" do
    url "https://files.pythonhosted.org/packages/74/26/2fbeedb218a787a5eea551c7532cac4e009f83d689dd2faa0d0353473f86/python_dotenv-1.2.4.tar.gz"
    sha256 "f0d53e69935a851c0dcc78f3ab7aaccd8cabef0b92382b576b824212902873c0"
  end

  resource "secretstorage" do
    url "https://files.pythonhosted.org/packages/1c/03/e834bcd866f2f8a49a85eaff47340affa3bfa391ee9912a952a1faa68c7b/secretstorage-3.5.0.tar.gz"
    sha256 "f04b8e4689cbce351744d5537bf6b1329c6fc68f91fa666f60a380edddcd11be"
  end

  resource "shtab" do
    url "https://files.pythonhosted.org/packages/ff/dd/e58588cf2d02266d504f4399979740b8b2b61fbd7719a89578afaa6558a3/shtab-1.13.0.tar.gz"
    sha256 "0a5be9d7ab2b4549e9a38252abcd5ecf5ec6813ecd80c6b06fa851bff55a5085"
  end

  resource "typing-extensions" do
    url "https://files.pythonhosted.org/packages/f6/cc/6253133b5bb138fc3306cebfbda2c520f545d36b5be2c7255cc528bb45d6/typing_extensions-4.16.0.tar.gz"
    sha256 "dc983d19a509c94dba722ee6abd33940f7c05a89e243c47e907eb4db6f1a43e5"
  end

  resource "typing-inspection" do
    url "https://files.pythonhosted.org/packages/ff/50/0195198eb1d75bab716bb0a813abea4cc394bfa17a92a189f021a34859af/typing_inspection-0.4.5.tar.gz"
    sha256 "7f16c411e7930dc79596d42ab44672a3fe5f60eb34b781a1647e7872363120c7"
  end

  resource "wcwidth" do
    url "https://files.pythonhosted.org/packages/ea/01/e5ac23733628a6bbb91913a765fcf55ee8070d8d991bc88fdaaf805052c7/wcwidth-0.9.4.tar.gz"
    sha256 "fd8d57d3cdfe570e3265c8fab1885c24e34ef40889c0759c0c304a19e9835954"
  end

  resource "yarl" do
    url "https://files.pythonhosted.org/packages/75/16/e8be8e2fb175bbf41a0680381a319f1199fae256588241a2ac8677eafb49/yarl-1.25.1.tar.gz"
    sha256 "03dd38de09bc213e9a8b29761eec33ee1d5318dac0e49d8af36e4d27830e23a7"
  end

  resource "zstandard" do
    url "https://files.pythonhosted.org/packages/fd/aa/3e0508d5a5dd96529cdc5a97011299056e14c6505b678fd58938792794b1/zstandard-0.25.0.tar.gz"
    sha256 "7713e1179d162cf5c7906da876ec2ccb9c3a9dcbdffef0cc7f70c3667a205f0b"
  end
  # END resources

  def install
    virtualenv_install_with_resources
    man1.install "man/muxctl.1", "man/muxd.1"
    # `muxctl completion bash|zsh|fish` prints the script (shtab, from muxctl's parser).
    # base_name: the files are named after the command (older Homebrew named them "mux").
    generate_completions_from_executable(bin/"muxctl", "completion", base_name: "muxctl")
  end

  def caveats
    <<~EOS
      mux starts on first use: muxctl starts muxd in the background. To start it at login,
      one of (not both: a second muxd for the same user exits with status 75):
        brew services start mux
        muxctl install --enable
      The latter writes a launch agent (macOS) that hands muxd its attach socket, or
      systemd user units (Linux) with socket and D-Bus activation, the watchdog and panes
      that survive a crash of muxd. Its files name this version's interpreter in the
      Cellar: run `muxctl install` again after `brew upgrade mux`.
    EOS
  end

  # Known limitation: Homebrew's service block cannot say what mux's own launch agent
  # (launchd/org.mux.muxd.plist, which `muxctl install` writes) says under `Sockets`:
  # a Unix socket (`SockPathName` the attach socket, `SockPathMode` 0600) that launchd
  # creates and hands to muxd (launch_activate_socket("attach")). `sockets` here takes
  # only tcp/udp host:port listeners. So this service runs muxd, which binds the attach
  # socket itself, and keeps it alive; `muxctl install --enable` gives socket activation.
  service do
    run opt_bin/"muxd"
    # As the launch agent: KeepAlive { SuccessfulExit = false }, restarted after a failure
    # but not after a clean stop (`muxctl stop`). Homebrew writes no Restart= at all for
    # that form in a systemd unit, so on Linux `true`, which it writes as Restart=on-failure.
    on_macos do
      keep_alive successful_exit: false
    end
    on_linux do
      keep_alive true
    end
    process_type :interactive
    # launchd's PATH lacks Homebrew's bin: dbus-daemon and the users' shells live there.
    environment_variables PATH: std_service_path_env
    log_path var/"log/muxd.log"
    error_log_path var/"log/muxd.log"
  end

  test do
    assert_match "muxd #{version}", shell_output("#{bin}/muxd --version")
    assert_match "install", shell_output("#{bin}/muxctl --help")
    # The installation imports (pyavt's and pydantic-core's extensions too) and the
    # default configuration loads.
    system bin/"muxd", "--check"
    assert_match "muxctl", (bash_completion/"muxctl").read
  end
end
