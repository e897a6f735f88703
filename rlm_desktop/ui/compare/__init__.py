"""Two saved runs side by side: settings, figures, answers, trees and timelines."""
